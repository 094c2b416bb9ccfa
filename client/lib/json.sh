# Shell helpers shared by client/client-ready.sh and client/server-setup.sh (sourced, not run).

# json_string TEXT: TEXT as a JSON string literal (quotes, backslashes and control characters escaped or dropped).
json_string() {
  local s=$1
  s=${s//\\/\\\\}
  s=${s//\"/\\\"}
  s=${s//$'\n'/\\n}
  s=${s//$'\r'/\\r}
  s=${s//$'\t'/\\t}
  s=$(tr -d '\000-\037' <<<"$s")
  printf '"%s"' "$s"
}
