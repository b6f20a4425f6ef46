import { parsePluginFile } from '../../libs/plugins-sdk';
import { staticSegments } from '../../libs/engine';

describe('§3 fixed instructions: contributes.prompt registered by the host', () => {
  const { manifest, body } = parsePluginFile(`---
id: status
name: Status
version: 0.0.1
contributes:
  prompt:
    - id: narrative-style
      content: "Keep {{ player.character }} literal."
      position: pre-history
---
Body.`);
  const plugin = {
    manifest,
    bodies: { en: body, 'zh-Hans': body },
    staticSegments: { en: manifest.contributes.prompt, 'zh-Hans': manifest.contributes.prompt },
    root: '(test)',
  };

  it('no template interpolation, the host sets providerPluginId, defaults apply', () => {
    expect(staticSegments([plugin], 'en')).toEqual([
      {
        id: 'narrative-style',
        providerPluginId: 'status',
        content: 'Keep {{ player.character }} literal.',
        position: 'pre-history',
        role: 'system',
        volatility: 'stable',
        order: 0,
        audience: 'self',
      },
    ]);
  });

  it('a manifest cannot claim another plugin as provider', () => {
    expect(() =>
      parsePluginFile(`---\nid: x\nname: X\nversion: "1"\ncontributes:\n  prompt:\n    - id: s\n      content: c\n      providerPluginId: narrator\n---\n`),
    ).toThrow(/providerPluginId|Unrecognized/);
  });
});
