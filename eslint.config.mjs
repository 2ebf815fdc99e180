// Type-aware lint (typescript-eslint's recommended-type-checked) over every TypeScript file the
// compiler checks; formatting is prettier's job (`npm run format`), not the linter's.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', '.cache/', '.stryker-tmp/', 'reports/', 'coverage/', '**/*.mjs', '**/*.cjs'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    // `const { dropped, ...rest } = x` is how a field is left out of a copy.
    rules: { '@typescript-eslint/no-unused-vars': ['error', { ignoreRestSiblings: true }] },
  },
  {
    // src/agent/state/ owns the state directory: the rest of the program uses its public interface
    // (state/index.ts) only, so that no other module knows the layout or writes there. Its own unit
    // tests (test/) may open the parts they test.
    files: ['src/**/*.ts', 'checks/**/*.ts', 'scripts/**/*.ts', 'installers/**/*.ts'],
    ignores: ['src/agent/state/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '(^|/)state/(?!index$)',
              message: 'the state directory belongs to src/agent/state/: import its public interface (agent/state) instead',
            },
          ],
        },
      ],
    },
  },
);
