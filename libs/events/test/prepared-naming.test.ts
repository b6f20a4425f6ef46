import { BoundedMemo } from '../../memo';
import { PREPARE_AFTER_USES, PREPARED_MAX_TEXT, PreparedNaming } from '../prepared-naming';

const spoiled = Object.assign(new Error('cached plan must not change result type'), { code: '0A000' });

/** A text named on its `PREPARE_AFTER_USES`th use under `naming`, remembered under its name. */
function named(naming: PreparedNaming<string>, text: string): string {
  for (let i = 1; i < PREPARE_AFTER_USES; i++) expect(naming.nameNow(text)).toBeUndefined();
  const name = naming.nameNow(text)!;
  naming.remember(text, name);
  return name;
}

describe('the naming policy shared by the pg and PGlite drivers', () => {
  it('a spoiled name stands inside a transaction, a ROLLBACK TO SAVEPOINT included, and is sent unnamed once outside', () => {
    const naming = new PreparedNaming<string>({ max: 10 });
    const a = named(naming, 'select $1 as a');
    const b = named(naming, 'select $1 as b');
    naming.noteUnparameterised('BEGIN');
    naming.noteUnparameterised('rollback to savepoint s1');
    expect(naming.sendUnnamedAfter(spoiled, 'select $1 as a', a)).toBe(false);
    expect(naming.known('select $1 as a')).toBeNull();
    naming.noteUnparameterised('rollback');
    expect(naming.sendUnnamedAfter(spoiled, 'select $1 as b', b)).toBe(true);
    // another error, or a name spoiled already, is not sent again
    expect(naming.sendUnnamedAfter(spoiled, 'select $1 as b', b)).toBe(false);
    const c = named(naming, 'select $1 as c');
    expect(naming.sendUnnamedAfter(Object.assign(new Error('dup'), { code: '23505' }), 'select $1 as c', c)).toBe(false);
    expect(naming.known('select $1 as c')).toBe(c);
    expect(naming.size).toBe(1);
  });

  it('names at most `max` texts and none longer than PREPARED_MAX_TEXT; uses shared between connections are kept', () => {
    const uses = new BoundedMemo<string, number>({ maxEntries: 8 });
    const first = new PreparedNaming<string>({ max: 1, sharedUses: uses });
    expect(named(first, 'select $1 as a')).toBe('covel_1');
    for (let i = 0; i < PREPARE_AFTER_USES; i++) expect(first.nameNow('select $1 as b')).toBeUndefined();
    const long = `select $1 as ${'é'.repeat(PREPARED_MAX_TEXT)}`;
    const second = new PreparedNaming<string>({ max: 10, sharedUses: uses });
    for (let i = 0; i < PREPARE_AFTER_USES; i++) expect(second.nameNow(long)).toBeUndefined();
    // the other connection's uses count: named on this one's first
    expect(second.nameNow('select $1 as a')).toBe('covel_1');
  });
});
