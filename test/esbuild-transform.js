// Jest's transform for TypeScript: esbuild strips the types of one file at a time (tsconfig has
// isolatedModules, so every file compiles alone), in a fraction of the time TypeScript's own
// transpileModule takes; a clean clone starts with an empty Jest cache, so every run transforms every
// file it loads. Type errors are tsc's to report (npm run typecheck; scripts/test.sh runs it), not the tests'.
const { transformSync } = require('esbuild');
const { createHash } = require('node:crypto');
const { version } = require('esbuild/package.json');

// Class fields as tsconfig's target (ES2022) compiles them: defined, not assigned.
const tsconfigRaw = { compilerOptions: { useDefineForClassFields: true } };
const options = {
  loader: 'ts',
  format: 'cjs',
  target: 'node20',
  sourcemap: 'inline',
  sourcesContent: false,
  tsconfigRaw,
  // import() becomes a require() in a promise, as tsc's CommonJS output has it: Jest runs CommonJS
  // and refuses a real dynamic import without --experimental-vm-modules.
  supported: { 'dynamic-import': false },
};

module.exports = {
  process(source, path) {
    return { code: transformSync(source, { ...options, sourcefile: path }).code };
  },
  getCacheKey(source, path) {
    return createHash('sha256')
      .update(`${version}\0${JSON.stringify(options)}\0${path}\0${source}`)
      .digest('hex');
  },
};
