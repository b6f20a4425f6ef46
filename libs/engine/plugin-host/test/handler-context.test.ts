import { emptyPluginData, type ExecutionScope, handlerContext } from '../handler-context';
import { previousTurnScope, retryScope } from '../../history/history-loader';

const scope: ExecutionScope = { tenantId: 't', sessionId: 's', turnNumber: 2, locale: 'en', world: null };

describe('handler context: ctx.session', () => {
  it('a regenerated turn shows the turn it re-runs as ctx.session.retryFromTurnId (from its execution)', () => {
    const ctx = handlerContext({ ...scope, ...retryScope({ turnId: 'turn-2', retryFromTurnId: 'turn-1' }) }, 'p', emptyPluginData);
    expect(ctx.session).toEqual({ id: 's', turnNumber: 2, turnId: 'turn-2', retryFromTurnId: 'turn-1' });
    expect(Object.isFrozen(ctx.session)).toBe(true);
  });

  it('any other execution has no retryFromTurnId key at all', () => {
    const ctx = handlerContext({ ...scope, ...retryScope({ turnId: 'turn-2' }) }, 'p', emptyPluginData);
    expect(ctx.session).toEqual({ id: 's', turnNumber: 2, turnId: 'turn-2' });
    expect('retryFromTurnId' in ctx.session).toBe(false);
  });

  it("ctx.session.turnId is the execution's own turn (absent where no execution runs)", () => {
    expect(handlerContext({ ...scope, ...retryScope({ turnId: 'turn-9' }) }, 'p', emptyPluginData).session.turnId).toBe('turn-9');
    expect('turnId' in handlerContext(scope, 'p', emptyPluginData).session).toBe(false);
  });

  it('ctx.session.previousTurnId is the turn of the last player input in the history read (none on the first turn)', () => {
    const history = {
      messages: [
        { sourceType: 'player', turnId: 'turn-1' },
        { sourceType: 'runtime', turnId: 'turn-1' },
        { sourceType: 'player', turnId: 'turn-2' },
        { sourceType: 'runtime', turnId: 'turn-2' },
        { sourceType: 'runtime', turnId: 'activation-3' }, // an activation's output: not a player turn
      ],
    };
    expect(handlerContext({ ...scope, ...previousTurnScope(history) }, 'p', emptyPluginData).session.previousTurnId).toBe('turn-2');
    expect('previousTurnId' in handlerContext({ ...scope, ...previousTurnScope({ messages: [] }) }, 'p', emptyPluginData).session).toBe(false);
  });
});
