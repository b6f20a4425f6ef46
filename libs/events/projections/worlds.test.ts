import { randomUUID } from 'node:crypto';
import { projectionSpec } from '../../../test/support/projection-spec';
import { InlineProjectionFailedError } from '../errors';
import type { NewEvent } from '../event-types';
import { worldsProjection } from './worlds';

const spec = projectionSpec({ inline: worldsProjection });
beforeAll(() => spec.start(), 120_000);
afterAll(() => spec.stop());

const created = (worldId: string, name: string): NewEvent => ({
  type: 'world.created@1',
  data: { worldId, revision: 1, document: { name, lore: 'Salt.' }, provenance: { kind: 'authored' } },
});
const revised = (worldId: string, revision: number, name: string): NewEvent => ({
  type: 'world.revised@1',
  data: { worldId, revision, document: { name, lore: `Salt ${revision}.` } },
});

describe('worlds (inline projection)', () => {
  it('given nothing, when a world is created, then it is at revision 1 with its document, provenance and creation position', async () => {
    const [t, w] = [randomUUID(), randomUUID()];
    await spec.check({
      when: [{ tenant: t, stream: w, events: [created(w, 'Saltmarrow 灯塔 🌊')] }],
      then: ({ at, position }) => ({
        worlds: [
          {
            world_id: w,
            tenant_id: t,
            name: 'Saltmarrow 灯塔 🌊',
            revision: 1,
            archived: false,
            document: { name: 'Saltmarrow 灯塔 🌊', lore: 'Salt.' },
            provenance: { kind: 'authored' },
            created_position: position(0),
            created_at: at(0),
            updated_at: at(0),
          },
        ],
      }),
    });
  });

  it('given a world, when it is revised twice and archived, then it holds the last document, revision 3, archived; its creation stays', async () => {
    const [t, w] = [randomUUID(), randomUUID()];
    await spec.check({
      given: [{ tenant: t, stream: w, events: [created(w, 'One')] }],
      when: [
        { tenant: t, stream: w, events: [revised(w, 2, 'Two')] },
        { tenant: t, stream: w, events: [revised(w, 3, 'Three'), { type: 'world.archived@1', data: { worldId: w } }] },
      ],
      then: ({ at, position }) => ({
        worlds: [
          {
            world_id: w,
            tenant_id: t,
            name: 'Three',
            revision: 3,
            archived: true,
            document: { name: 'Three', lore: 'Salt 3.' },
            provenance: { kind: 'authored' },
            created_position: position(0),
            created_at: at(0),
            updated_at: at(3),
          },
        ],
      }),
    });
  });

  it('a revision that is not the next one fails its append, and the world keeps its row', async () => {
    const [t, w] = [randomUUID(), randomUUID()];
    await spec.append({ tenant: t, stream: w, events: [created(w, 'One')] });
    await expect(spec.append({ tenant: t, stream: w, events: [revised(w, 5, 'Five')] })).rejects.toThrow(InlineProjectionFailedError);
    expect((await spec.rows([w])).worlds.map((r) => [r.name, r.revision])).toEqual([['One', 1]]);
  });
});
