import { buildContext, HiddenDataInjectionError, isHiddenNamespace } from '..';
import { params } from './fixtures';

describe('§1 "Injecting the hidden world data _hidden.* throws an error directly"', () => {
  it('a selfData namespace named _hidden or _hidden.* makes buildContext throw, naming the runtime and the name', async () => {
    for (const name of ['_hidden', '_hidden.secrets', '_hidden.world.villain']) {
      const assembly = buildContext(params({ selfData: [{ namespace: name, rows: [{ key: 'k', value: 'secret' }], totalRows: 1 }] }));
      await expect(assembly).rejects.toThrow(HiddenDataInjectionError);
      await expect(assembly).rejects.toMatchObject({
        code: 'HIDDEN_DATA_INJECTION',
        category: 'invalid',
        message: expect.stringContaining(`"${name}" is hidden world data`),
      });
    }
  });

  it('names that only look alike are data like any other', async () => {
    expect(['_hiddenness', 'hidden', '_Hidden.x', 'x._hidden', '_hidden_'].map(isHiddenNamespace)).toEqual([false, false, false, false, false]);
    const ctx = await buildContext(params({ selfData: [{ namespace: '_hiddenness', rows: [{ key: 'k', value: 1 }], totalRows: 1 }] }));
    expect(ctx.turnContext).toContain('<self-data namespace="_hiddenness">\n- k | 1\n</self-data>');
  });

  it('an empty namespace adds no block', async () => {
    const ctx = await buildContext(params({ selfData: [{ namespace: 'empty', rows: [], totalRows: 0 }] }));
    expect(ctx.turnContext).toBe('');
  });
});
