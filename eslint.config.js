// @ts-check
// Lint with type information (typescript-eslint strictTypeChecked): the rules that need the type
// checker are the ones that find real defects here (floating promises, unsafe `any`, conditions that
// are always true or always false). Every rule relaxed below says why.
const eslint = require('@eslint/js');
const tseslint = require('typescript-eslint');

module.exports = tseslint.config(
  { ignores: ['dist/**', 'cdk.out/**', 'node_modules/**', '.venv/**', 'test-output/**', 'coverage/**', '**/*.js', '**/*.mjs'] },
  eslint.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: __dirname },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // tsconfig has noUncheckedIndexedAccess: every `xs[i]` / `record[key]` read is `T | undefined`.
      // Where the code has just proven the index in range (loop bounds, a key taken from the same
      // object, a length check), `!` states that proof. Replacing each one with a runtime check would
      // add branches that cannot run; the compiler still refuses `!` nowhere it matters, and
      // no-unnecessary-type-assertion removes any `!` on a value that cannot be undefined.
      '@typescript-eslint/no-non-null-assertion': 'off',
      // Numbers and booleans print as expected in messages and SQL; what this rule is for is
      // objects ("[object Object]"), undefined and null in user-facing text, which stay errors.
      // `() => resolve()` / `(e) => done(e)` as callbacks is the idiom of every event API the code
      // uses; wrapping each in braces says nothing more. Void used anywhere else stays an error.
      '@typescript-eslint/no-confusing-void-expression': ['error', { ignoreArrowShorthand: true }],
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true, allowBoolean: true }],
    },
  },
);
