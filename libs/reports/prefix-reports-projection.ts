import { sql } from 'kysely';
import { eventByEvent, type Projection } from '../events';
import { comparePrefix, type RecordedRequest } from './prefix-compare';

/**
 * `prefix_reports`, kept live from `llm.calling` (the estimate against the previous turn's first
 * request of the same runtime) and `llm.responded` (what the provider, or the emulator, reported
 * as cached), so an expected hit that did not happen is visible.
 */
export const prefixReportsProjection: Projection = eventByEvent({
  name: 'prefix_reports',
  handles: ['llm.calling@1', 'llm.responded@1'],
  tables: ['prefix_reports'],
  async apply(trx, event) {
    if (event.type === 'llm.responded@1') {
      await trx
        .updateTable('prefix_reports')
        .set({ provider_cached_tokens: event.data.usage.cachedInputTokens, provider_input_tokens: event.data.usage.inputTokens })
        .where('call_id', '=', event.data.callId)
        .execute();
      return;
    }
    if (event.type !== 'llm.calling@1') return;
    const d = event.data;
    const runtime = `${d.pluginId}/${d.runtimeId}`;
    const sessionRows = trx.selectFrom('prefix_reports').where('session_id', '=', event.streamId);
    // one round trip: this turn's number if a call of it was seen, the session's turn count, and
    // whether this runtime already made a call in this turn
    const { rows } = await sql<{ same_turn: number | null; turns: string; seen: boolean }>`
      select
        (select turn from prefix_reports where session_id = ${event.streamId} and turn_id = ${d.turnId} limit 1) as same_turn,
        (select count(distinct turn_id) from prefix_reports where session_id = ${event.streamId}) as turns,
        exists (select 1 from prefix_reports where session_id = ${event.streamId} and turn_id = ${d.turnId} and runtime = ${runtime}) as seen`.execute(trx);
    const turn = rows[0].same_turn ?? Number(rows[0].turns) + 1;
    const firstInTurn = !rows[0].seen;
    const current: RecordedRequest = { protocol: d.provider, body: JSON.parse(d.body) as Record<string, unknown>, layout: d.layout };
    let figures = comparePrefix(current, current);
    let compared = false;
    if (firstInTurn) {
      const prev = await sessionRows
        .select(['body', 'layout', 'protocol'])
        .where('runtime', '=', runtime)
        .where('first_in_turn', '=', true)
        .orderBy('position', 'desc')
        .limit(1)
        .executeTakeFirst();
      if (prev) {
        figures = comparePrefix(
          { protocol: prev.protocol, body: JSON.parse(prev.body) as Record<string, unknown>, layout: prev.layout as RecordedRequest['layout'] },
          current,
        );
        compared = true;
      }
    }
    await trx
      .insertInto('prefix_reports')
      .values({
        call_id: d.callId,
        tenant_id: event.tenantId,
        session_id: event.streamId,
        turn_id: d.turnId,
        turn,
        runtime,
        position: String(event.globalPosition),
        first_in_turn: firstInTurn,
        protocol: d.provider,
        body: d.body,
        layout: d.layout ? JSON.stringify(d.layout) : null,
        request_tokens: figures.requestTokens,
        shared_tokens: compared ? figures.sharedTokens : null,
        shared_percent: compared ? figures.sharedPercent : null,
        first_difference: compared && figures.firstDifference ? JSON.stringify(figures.firstDifference) : null,
        provider_cached_tokens: null,
        provider_input_tokens: null,
      })
      .onConflict((oc) => oc.column('call_id').doNothing())
      .execute();
  },
});
