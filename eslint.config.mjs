// ESLint: type-aware TypeScript rules. Layering and import cycles are dependency-cruiser's job (npm run lint:layers);
// Formatting is prettier's job (`npm run format`); eslint-config-prettier turns off what would clash.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import prettier from 'eslint-config-prettier';

import productBranches from './eslint-product-branches.cjs';

const PRODUCT_BRANCHES = productBranches.PRODUCT_BRANCHES;

export default tseslint.config(
  {
    ignores: [
      'node_modules/**',
      'cdk.out/**',
      'cdk.out.*/**',
      'runs/**',
      'coverage/**',
      'bench/out/**',
      'test/fixtures/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      // a switch over a union names every member (or says `default` on purpose)
      '@typescript-eslint/switch-exhaustiveness-check': [
        'error',
        { considerDefaultExhaustiveForUnions: true },
      ],
      // The type-check resolves aws-cdk-lib's root to its core module (tsconfig.typecheck.json): a
      // service module comes from its subpath.
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^aws-cdk-lib$',
              importNamePattern: '^aws_',
              message:
                "import AWS service modules from their subpaths ('aws-cdk-lib/aws-ec2'): the type-check maps aws-cdk-lib's root to core (tsconfig.typecheck.json)",
            },
          ],
        },
      ],
    },
  },
  {
    // The CLI loads subcommands, their work and run hooks lazily (a synchronous `require` keeps
    // `proxylab --help` from loading AWS clients, pg or echarts, and `proxylab local` from loading the
    // AWS code): each module is typed as itself (`require(P) as typeof import(P)`, checked by
    // test/unit/cli-lazy.test.ts) or checked by a type guard where it is loaded.
    files: ['scripts/cli.ts', 'scripts/commands/*.ts'],
    rules: {
      '@typescript-eslint/no-require-imports': [
        'error',
        { allow: ['^\\./commands/[\\w-]+$', '^\\.\\./\\.\\./lib/', '^@aws-sdk/client-[a-z0-9-]+$'] },
      ],
    },
  },
  {
    // AWS SDK clients: each service's package loads when its first client is made (a typed lazy require).
    files: ['lib/aws/clients.ts'],
    rules: {
      '@typescript-eslint/no-require-imports': ['error', { allow: ['^@aws-sdk/client-[a-z0-9-]+$'] }],
    },
  },
  {
    // cdk-nag loads when a lab app's checks are added, not with every lab stack (lib/lab-stack.ts).
    files: ['lib/lab-stack.ts'],
    rules: { '@typescript-eslint/no-require-imports': ['error', { allow: ['^cdk-nag$'] }] },
  },
  {
    // Shipped code states what it does when an index or lookup misses (noUncheckedIndexedAccess is on);
    // tests may assert with `!` where a miss fails the test anyway.
    files: ['lib/**/*.ts', 'scripts/**/*.ts', 'lambda/**/*.ts', 'bin/**/*.ts', 'bench/**/*.ts'],
    rules: { '@typescript-eslint/no-non-null-assertion': 'error' },
  },
  {
    files: ['lib/**/*.ts', 'scripts/**/*.ts', 'lambda/**/*.ts', 'bin/**/*.ts'],
    ignores: ['lib/products/**'],
    rules: { 'no-restricted-syntax': ['error', ...PRODUCT_BRANCHES] },
  },
  {
    // Size (CONTRIBUTING.md "Size"): no file over 650 lines and no function over 120 in shipped code,
    // physical lines, blank lines and comments included (an IIFE counts as a function). Split along a
    // seam — a file per concern — rather than squash lines.
    files: ['lib/**/*.ts', 'scripts/**/*.ts', 'lambda/**/*.ts', 'bin/**/*.ts'],
    rules: {
      'max-lines': ['error', { max: 650, skipBlankLines: false, skipComments: false }],
      'max-lines-per-function': [
        'error',
        { max: 120, skipBlankLines: false, skipComments: false, IIFEs: true },
      ],
    },
  },
  {
    // Reading run files (CONTRIBUTING.md): every reader of a run directory, a bucket's copy of one or a
    // lab file opens it through lib/core/read.ts (readFileIn / listDirIn / readTextFile), which follows
    // no link out of the run directory, refuses FIFOs and devices, and bounds sizes and depth. Direct
    // reads are an error here, whatever the `fs` namespace is called.
    files: [
      'lib/report/**/*.ts',
      'lib/engine/**/*.ts',
      'lib/results/**/*.ts',
      'lib/suite/**/*.ts',
      'lib/local/fs-*.ts',
      'lib/local/run-local.ts',
      'lib/local/run-lock.ts',
      'lib/operator/runs.ts',
      'lib/aws/s3-sink.ts',
      'lib/aws/spot.ts',
      'lib/runner/fleet*.ts',
      'lib/operator/outputs.ts',
      'lib/aws/run-request.ts',
      'lib/operator/recollect.ts',
      'lib/config/**/*.ts',
      'scripts/commands/{report,compare,fetch,status,validate,local,run}.ts',
    ],
    rules: {
      'no-restricted-syntax': [
        'error',
        ...PRODUCT_BRANCHES,
        {
          selector:
            'MemberExpression[property.name=/^(readFileSync|readdirSync|createReadStream|readFile|readdir|opendirSync|opendir)$/]',
          message: 'read run and lab files through lib/core/read.ts (readFileIn, listDirIn, readTextFile)',
        },
        {
          selector:
            'ImportDeclaration[source.value=/^(node:)?fs(\\/promises)?$/] > ImportSpecifier[imported.name=/^(readFileSync|readdirSync|createReadStream|readFile|readdir|opendirSync|opendir)$/]',
          message: 'read run and lab files through lib/core/read.ts (readFileIn, listDirIn, readTextFile)',
        },
      ],
    },
  },
  {
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    // CommonJS entry points run by node itself (the launcher, jest's config and test sequencer, the
    // CPU-measuring test environment of bench/README.md "npm test time").
    files: [
      'scripts/proxylab.js',
      'scripts/cli-bundle.js',
      'jest.config.js',
      'test/helpers/sequencer.js',
      'bench/jest-cpu-env.js',
      '.dependency-cruiser.cjs',
      'eslint-product-branches.cjs',
    ],
    languageOptions: {
      sourceType: 'commonjs',
      globals: { require: 'readonly', module: 'writable', process: 'readonly', __dirname: 'readonly' },
    },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  prettier,
);
