const { relative } = require('node:path');
const Sequencer = require('@jest/test-sequencer').default;

/**
 * Jest's order, the slowest suites first, also on a machine that never ran them (CI): there Jest
 * has no timings of its own and orders by file size, so a short file that runs long (a browser
 * test, an engine that plays many turns) may start last and keep one worker busy while the other
 * idles. Known durations come from Jest's own cache when it has one, else from
 * `suite-durations.json` (seconds per suite, from a whole run: `node tools/suite-durations.js
 * <jest --json output>`); a suite known to neither runs after the known ones, largest file first.
 * Suites that failed last time still run first.
 */
class SlowestFirst extends Sequencer {
  constructor(...args) {
    super(...args);
    this.durations = require('./suite-durations.json');
  }

  /** Milliseconds: the cache's, else the committed file's; undefined when neither knows the suite. */
  time(test) {
    const cached = super.time(test);
    if (cached != null) return cached;
    const seconds = this.durations[relative(test.context.config.rootDir, test.path).split('\\').join('/')];
    return seconds === undefined ? undefined : seconds * 1000;
  }

  sort(tests) {
    const sizes = new Map();
    const size = (test) => {
      if (!sizes.has(test.path)) sizes.set(test.path, test.context.hasteFS.getSize(test.path) ?? 0);
      return sizes.get(test.path);
    };
    for (const test of tests) test.duration = this.time(test);
    return tests.sort((a, b) => {
      const failed = Number(this.hasFailed(b)) - Number(this.hasFailed(a));
      if (failed !== 0) return failed;
      const known = Number(b.duration != null) - Number(a.duration != null);
      if (known !== 0) return known;
      if (a.duration != null && b.duration != null && a.duration !== b.duration) return b.duration - a.duration;
      return size(b) - size(a) || (a.path < b.path ? -1 : 1);
    });
  }
}

module.exports = SlowestFirst;
