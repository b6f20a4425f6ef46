const { appendFileSync, readFileSync } = require('node:fs');
const { relative } = require('node:path');
const TestEnvironment = require('./test-environment');

/** Clock ticks a second of /proc's CPU times (USER_HZ: 100 on Linux). */
const TICKS = 100;

/**
 * CPU seconds so far: this process's (user, system) and that of its children it has waited for
 * (/proc/self/stat's cutime and cstime: an `npm start` and the engine npm ran, once they exited).
 */
function sample() {
  const self = process.cpuUsage();
  let children = { user: 0, system: 0 };
  try {
    // the fields after the command name (which may hold spaces), from the state on: cutime and cstime are the 14th and 15th
    const fields = readFileSync('/proc/self/stat', 'utf8').split(') ').pop().split(' ');
    children = { user: Number(fields[13]) / TICKS, system: Number(fields[14]) / TICKS };
  } catch {
    // no /proc: the children's part stays 0
  }
  return { wall: Date.now() / 1000, user: self.user / 1e6, system: self.system / 1e6, childUser: children.user, childSystem: children.system };
}

/**
 * The test environment (./test-environment.js) that also records where the CPU of a test run goes, per test file: with
 * `COVEL_TEST_CPU=<file>` (jest.config.js uses it then, and only then), each file appends one JSON
 * line there: its CPU seconds in the Jest worker (loading and compiling modules, the test, its hooks)
 * and in the child processes it started, and its wall time. `node tools/test-cpu.js <file>` sums them
 * up. A worker's garbage collection of an earlier file's heap may count for a later one.
 */
class CpuEnvironment extends TestEnvironment {
  constructor(config, context) {
    super(config, context);
    this.testPath = relative(config.globalConfig.rootDir, context.testPath);
    this.started = sample();
  }

  async teardown() {
    await super.teardown();
    const ended = sample();
    const delta = (key) => Math.round((ended[key] - this.started[key]) * 1000) / 1000;
    const line = {
      file: this.testPath,
      worker: process.env.JEST_WORKER_ID ?? null,
      user: delta('user'),
      system: delta('system'),
      childUser: delta('childUser'),
      childSystem: delta('childSystem'),
      wall: delta('wall'),
    };
    appendFileSync(process.env.COVEL_TEST_CPU, `${JSON.stringify(line)}\n`);
  }
}

module.exports = CpuEnvironment;
