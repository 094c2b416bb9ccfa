// @ts-check
// Lint with type information (typescript-eslint strictTypeChecked): the rules that need the type
// checker are the ones that find real defects here (floating promises, unsafe `any`, conditions that
// are always true or always false). Every rule relaxed below says why.
//
// There is no baseline of suppressed findings: every finding fails `npm run lint`. A line that truly
// needs an exception carries `// eslint-disable-next-line <rule> -- <why>`; a directive that no
// longer suppresses anything is itself an error (reportUnusedDisableDirectives).
const eslint = require('@eslint/js');
const tseslint = require('typescript-eslint');

module.exports = tseslint.config(
  {
    ignores: [
      'dist/**',
      'cdk.out/**',
      'node_modules/**',
      '.venv/**',
      'test-output/**',
      'coverage/**',
      '**/*.js',
      '**/*.mjs',
    ],
  },
  eslint.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      // One program from tsconfig.json (which includes every linted file) rather than projectService:
      // the same findings, and the type checker builds the whole program once instead of per file
      // group, which makes a lint without cache about twice as fast.
      parserOptions: { project: ['./tsconfig.json'], tsconfigRootDir: __dirname },
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // These two ask the type checker for the contextual type of nearly every expression, which no other
      // rule and no compile needs: a fifth of a whole lint's CPU (68 CPU-s with them, 53 without), and the
      // test gate shares two cores with the lint. What they catch, a structurally typed value where a
      // class instance or an enum member is expected, is narrow here: the code has one enum
      // (RunnerExitCode), and neither rule flags anything in it.
      '@typescript-eslint/no-unsafe-class-instance-assignment': 'off',
      '@typescript-eslint/no-unsafe-enum-assignment': 'off',
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
      // `const { a: _a, ...rest } = x` is how the code says "x without a" (options passed on, a
      // record less one key); the named sibling exists only to be left out of `rest`.
      // A parameter an implementation of a port method does not need keeps its place in the
      // signature, named with a leading underscore.
      '@typescript-eslint/no-unused-vars': ['error', { ignoreRestSiblings: true, argsIgnorePattern: '^_' }],
      // Lines at most 120 characters, code, comments, strings and templates alike (Prettier's printWidth is 120 but
      // it never breaks a literal or a comment). Exempt: a line holding a URL (a link cut in two is no link). Test
      // titles too: Prettier keeps `it('title', () => {` on one line, so a title must be short enough to fit.
      'max-len': [
        'error',
        {
          code: 120,
          tabWidth: 2,
          ignoreUrls: true,
        },
      ],
    },
  },
  {
    files: ['test/**/*.ts'],
    rules: {
      // Tests read what the code under test wrote (JSON.parse of result files, CLI --json output,
      // SDK responses from moto) and assert on it with expect(), which is the type check there:
      // declaring a type for every parsed document would only restate the assertion.
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      // The same documents held as `Record<string, any>` (a synthesized template's resources) to reach into them.
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  // Import boundaries (docs/architecture.md). The full one-way order between folders is checked by
  // test/unit/import-graph.test.ts; these two say it where the editor shows it.
  {
    files: ['core/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(\\.\\./)+(lambdas|bin|lib)(/|$)',
              message: 'core/ never imports the entry points (lambdas/, bin/, lib/): they import core.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['lib/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^\\.\\./(core/cli|bin)(/|$)',
              message: 'lib/ (the CDK app) imports no CLI code: move what both need below core/cli.',
            },
          ],
        },
      ],
    },
  },
);
