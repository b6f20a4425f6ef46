import { planClaims } from '../projections/async/claim-plan';

const P = 16;
const holdings = (owners: (string | null)[], live = true) => owners.map((owner, shard) => ({ shard, owner, leaseLive: live }));

describe('planClaims: a fair share of the log partitions per live owner', () => {
  it('alone: every partition', () => {
    expect(planClaims({ holdings: holdings(Array(P).fill(null)), owner: 'A', partitions: P })).toMatchObject({ release: [], steal: null });
    expect(planClaims({ holdings: holdings(Array(P).fill(null)), owner: 'A', partitions: P }).claim.sort((a, b) => a - b)).toEqual([...Array(P).keys()]);
  });

  it('a newcomer takes one partition from an owner above its share; that owner gives back its excess', () => {
    const all = holdings(Array(P).fill('A'));
    const b = planClaims({ holdings: all, owner: 'B', partitions: P });
    expect(b.claim).toEqual([]);
    expect(b.steal).toEqual({ shard: expect.any(Number), from: 'A' });
    const afterSteal = all.map((h) => (h.shard === b.steal!.shard ? { ...h, owner: 'B' } : h));
    const a = planClaims({ holdings: afterSteal, owner: 'A', partitions: P });
    expect(a.claim).toHaveLength(8);
    expect(a.release).toHaveLength(7);
  });

  it('a dead owner (lease run out) holds nothing; a replay is not counted and its partitions are left alone', () => {
    expect(planClaims({ holdings: holdings(Array(P).fill('A'), false), owner: 'B', partitions: P }).claim).toHaveLength(P);
    const withReplay = [...holdings(Array(P).fill(null)), ...holdings(Array(P).fill('replay:9'))];
    expect(planClaims({ holdings: withReplay, owner: 'B', partitions: P }).claim).toHaveLength(P);
  });
});
