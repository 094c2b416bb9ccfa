/**
 * Stock sysbench tests that only read (sysbench 1.0.20 src/lua/oltp_read_only.lua, oltp_point_select.lua,
 * select_random_points.lua, select_random_ranges.lua): they can target a reader without write forwarding.
 * A module of its own, without the experiment schema's validator, so that the Tasks that only plan or
 * price (core/plan) keep zod out of their Lambda bundles.
 */
export const READ_ONLY_TESTS: ReadonlySet<string> = new Set([
  'oltp_read_only',
  'oltp_point_select',
  'select_random_points',
  'select_random_ranges',
]);
