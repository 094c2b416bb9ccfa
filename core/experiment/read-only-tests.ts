/**
 * Stock sysbench tests that only read, so they can target a reader without write forwarding.
 * See sysbench 1.0.20 src/lua/oltp_read_only.lua and its siblings.
 * It is a module of its own, so the Tasks that only plan or price keep zod out of their bundles.
 */
export const READ_ONLY_TESTS: ReadonlySet<string> = new Set([
  'oltp_read_only',
  'oltp_point_select',
  'select_random_points',
  'select_random_ranges',
]);
