-- latest_run: the run that started last (ISO-8601 UTC timestamps compare as strings in both engines).
CREATE OR REPLACE VIEW latest_run AS
SELECT *
FROM runs
WHERE started_at = (SELECT MAX(started_at) FROM runs)
