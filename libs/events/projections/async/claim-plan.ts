/** Owners whose rows a replay holds: they take whole projections and are not counted in the share. */
export const REPLAY_OWNER_PREFIX = 'replay:';

export interface ShardHolding {
  shard: number;
  owner: string | null;
  leaseLive: boolean;
}

export interface ClaimPlan {
  /** Partitions to take (free, ours, or expired) this pass, ours first. */
  claim: number[];
  /** Partitions we hold beyond our share: given back. */
  release: number[];
  /** One partition to take from an owner that holds more than its share, when nothing is free. */
  steal: { shard: number; from: string } | null;
}

/**
 * Which log partitions a projector works this pass. Each live owner (one holding an unexpired
 * lease; replays aside) gets a fair share, ⌈partitions ÷ owners⌉: an owner keeps what it holds up
 * to its share, takes free partitions (starting at an offset of its own, so owners starting
 * together spread out), gives back the excess, and when nothing is free takes one partition from
 * an owner above its share. A newcomer thereby gets its share within a few passes, and a dead
 * owner's partitions are free once its lease runs out.
 */
export function planClaims(input: { holdings: readonly ShardHolding[]; owner: string; partitions: number }): ClaimPlan {
  const { owner, partitions } = input;
  const holders = new Map<number, Set<string>>();
  for (let p = 0; p < partitions; p++) holders.set(p, new Set());
  for (const h of input.holdings) {
    if (h.owner === null || h.owner.startsWith(REPLAY_OWNER_PREFIX)) continue;
    if (h.owner === owner || h.leaseLive) holders.get(h.shard)?.add(h.owner);
  }
  const held = new Map<string, number[]>();
  for (const [shard, owners] of holders) for (const o of owners) held.set(o, [...(held.get(o) ?? []), shard]);
  const mine = held.get(owner) ?? [];
  const owners = new Set([...held.keys(), owner]);
  const share = Math.ceil(partitions / owners.size);

  const keep = mine.slice(0, share);
  const release = mine.slice(share);
  const start = offsetOf(owner, partitions);
  const free: number[] = [];
  for (let i = 0; i < partitions; i++) {
    const p = (start + i) % partitions;
    if (holders.get(p)!.size === 0) free.push(p);
  }
  const claim = [...keep, ...free.slice(0, Math.max(0, share - keep.length))];
  let steal: ClaimPlan['steal'] = null;
  if (claim.length < share) {
    const [victim, shards] = [...held.entries()].filter(([o]) => o !== owner).sort((a, b) => b[1].length - a[1].length)[0] ?? [null, []];
    if (victim !== null && shards.length > share) {
      // their partition no one else also holds, counted from our offset
      const candidates = shards.filter((s) => holders.get(s)!.size === 1);
      if (candidates.length > 0) steal = { shard: candidates[candidates.length - 1], from: victim };
    }
  }
  return { claim, release, steal };
}

/** A stable offset per owner in 0..partitions-1 (FNV-1a of its id). */
function offsetOf(owner: string, partitions: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < owner.length; i++) {
    hash ^= owner.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % partitions;
}
