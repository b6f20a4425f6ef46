import { dirname, join } from 'node:path';
import * as ts from 'typescript';

// tools/register.js hands @swc-node/register a stand-in for `typescript` and the compiler options
// read as JSON: both must give SWC exactly what the real compiler would.
const ROOT = join(__dirname, '..', '..');
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { typescriptEnums, compilerOptions } = require(join(ROOT, 'tools', 'register-options.js')) as {
  typescriptEnums: Record<string, Record<string, string | number>>;
  compilerOptions(path: string): Record<string, unknown>;
};
// eslint-disable-next-line @typescript-eslint/no-require-imports
const swcNode = require(join(dirname(require.resolve('@swc-node/register')), 'lib', 'read-default-tsconfig.js')) as {
  readDefaultTsConfig(path: string): Record<string, unknown>;
  tsCompilerOptionsToSwcConfig(options: Record<string, unknown>, filename: string): unknown;
};

describe('tools/register-options.js', () => {
  it('the stand-in enums hold the values of the TypeScript compiler', () => {
    for (const [name, values] of Object.entries(typescriptEnums)) {
      const real = (ts as unknown as Record<string, Record<string, unknown>>)[name];
      for (const [key, value] of Object.entries(values)) expect([name, key, real?.[key]]).toEqual([name, key, value]);
    }
  });

  it('tsconfig.json read as JSON gives SWC the configuration the TypeScript compiler gives it', () => {
    const tsconfig = join(ROOT, 'tsconfig.json');
    // as register() does with either
    const ours = { ...compilerOptions(tsconfig), module: ts.ModuleKind.CommonJS };
    const real = { ...swcNode.readDefaultTsConfig(tsconfig), module: ts.ModuleKind.CommonJS };
    for (const file of ['apps/main.ts', 'tools/x.js']) {
      expect(swcNode.tsCompilerOptionsToSwcConfig(ours, file)).toEqual(swcNode.tsCompilerOptionsToSwcConfig(real, file));
    }
    expect(ours).toMatchObject({ experimentalDecorators: true, emitDecoratorMetadata: true, sourceMap: true });
  });
});
