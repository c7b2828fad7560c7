'use strict';
// The run_code worker. In: framed JSON on stdin (one `start`, then `result` frames answering
// nested calls); out: framed JSON on stdout (`call`, `log`, then one `done`). A frame is a
// 4-byte big-endian length and that many bytes of UTF-8 JSON.
//
// The program runs in a fresh vm context that holds only ECMAScript built-ins, `tools` and
// `console`, all made inside that context: no object of this (host) realm is ever handed to
// it, so it cannot climb a prototype chain to this realm's `Function` or `process`. The host
// side of the channel is two closures it cannot name. Node's permission model (no writes, no
// child processes, no workers) and the OS sandbox around this process are the layers below.

const vm = require('vm');
const path = require('path');
const { transform } = require(path.join(__dirname, 'node_modules', 'sucrase'));

function writeFrame(text) {
  // never throws into the program: a broken pipe means the parent is gone
  try {
    const body = Buffer.from(String(text), 'utf8');
    const head = Buffer.alloc(4);
    head.writeUInt32BE(body.length, 0);
    process.stdout.write(Buffer.concat([head, body]));
  } catch (_) { /* the parent sees the worker exit */ }
}

// Built inside the context: it sees only the two host closures, as arguments it keeps private.
const BOOTSTRAP = `(function (hostSend, namesJson) {
  'use strict';
  const stringify = JSON.stringify, parse = JSON.parse, apply = Reflect.apply;
  const then = Promise.prototype.then, PromiseC = Promise, MapC = Map, ErrorC = Error, StringC = String;
  const define = Object.defineProperty, freeze = Object.freeze, create = Object.create;
  const mapGet = Map.prototype.get, mapSet = Map.prototype.set, mapDelete = Map.prototype.delete;
  const pending = new MapC();
  let next = 0;

  function send(text) { hostSend(text); }

  function binding(name) {
    const quoted = stringify(name);
    return function (args) {
      return new PromiseC(function (resolve, reject) {
        let text;
        try {
          text = stringify(args === undefined ? {} : args);
        } catch (e) {
          reject(new TypeError('tools[' + quoted + ']: the arguments are not JSON'));
          return;
        }
        if (typeof text !== 'string') {
          reject(new TypeError('tools[' + quoted + ']: the arguments are not JSON'));
          return;
        }
        next += 1;
        apply(mapSet, pending, [next, { resolve: resolve, reject: reject }]);
        send('{"type":"call","id":' + next + ',"name":' + quoted + ',"args":' + text + '}');
      });
    };
  }

  // null prototype and own properties only: a binding named __proto__ or constructor is just a name
  const tools = create(null);
  const names = parse(namesJson);
  for (let i = 0; i < names.length; i += 1) {
    define(tools, names[i], { value: freeze(binding(names[i])), enumerable: true });
  }
  freeze(tools);

  function show(value) {
    if (typeof value === 'string') return value;
    try {
      const text = stringify(value);
      return typeof text === 'string' ? text : StringC(value);
    } catch (e) {
      try { return StringC(value); } catch (e2) { return '[unprintable]'; }
    }
  }
  function logger(level) {
    return function () {
      const parts = [];
      for (let i = 0; i < arguments.length; i += 1) parts[parts.length] = show(arguments[i]);
      send(stringify({ type: 'log', level: level, text: parts.join(' ') }));
    };
  }
  const console = create(null);
  for (const level of ['log', 'info', 'warn', 'error', 'debug']) {
    define(console, level, { value: freeze(logger(level)), enumerable: true });
  }
  freeze(console);

  function deliver(id, ok, payload) {
    const waiter = apply(mapGet, pending, [id]);
    if (waiter === undefined) return;
    apply(mapDelete, pending, [id]);
    const answer = parse(payload);
    if (ok) { waiter.resolve(answer); return; }
    const error = new ErrorC(StringC(answer.message));
    error.name = 'ToolError';
    error.code = answer.code === undefined ? null : answer.code;
    error.tool = answer.tool;
    waiter.reject(error);
  }

  function describe(thrown) {
    try {
      if (thrown !== null && typeof thrown === 'object' && typeof thrown.message === 'string') {
        return StringC(thrown.name) + ': ' + thrown.message;
      }
      return 'a non-Error value was thrown: ' + show(thrown);
    } catch (e) {
      return 'an unprintable value was thrown';
    }
  }
  function finish(ok, value) {
    if (!ok) {
      send(stringify({ type: 'done', ok: false, error: { class: 'exception', message: describe(value) } }));
      return;
    }
    if (value === undefined) { send('{"type":"done","ok":true}'); return; }
    let text;
    try { text = stringify(value); } catch (e) { text = undefined; }
    if (typeof text !== 'string') {
      send(stringify({ type: 'done', ok: false, error: { class: 'invalid-output',
        message: 'the program returned a value that is not JSON (' + typeof value + ')' } }));
      return;
    }
    send('{"type":"done","ok":true,"value":' + text + '}');
  }
  function start(main) {
    let promise;
    try { promise = main(); } catch (e) { finish(false, e); return; }
    apply(then, PromiseC.resolve(promise), [function (v) { finish(true, v); }, function (e) { finish(false, e); }]);
  }
  function refusal(message) { return new ErrorC(message); }
  return { tools: tools, console: console, deliver: deliver, start: start, refusal: refusal };
})`;

let program = null; // what the bootstrap returned: deliver + start, both of the context's realm

function run(frame) {
  const context = vm.createContext(Object.create(null), {
    name: 'run_code',
    codeGeneration: { strings: false, wasm: false },
  });
  const hostSend = function (text) { if (typeof text === 'string') writeFrame(text); };
  program = new vm.Script(BOOTSTRAP, { filename: 'dshc-bootstrap.js' })
    .runInContext(context)(hostSend, JSON.stringify(frame.tools));
  // the program's only globals besides the built-ins
  vm.runInContext('(function (t, c) { Object.defineProperty(globalThis, "tools", { value: t }); '
    + 'Object.defineProperty(globalThis, "console", { value: c }); })', context)(program.tools, program.console);
  let source;
  try {
    source = transform('(async function () {\n' + frame.code + '\n})', {
      transforms: ['typescript'], disableESTransforms: true, production: true,
    }).code;
  } catch (e) {
    writeFrame(JSON.stringify({ type: 'done', ok: false, error: { class: 'exception',
      message: 'SyntaxError: ' + String(e && e.message) } }));
    return;
  }
  let main;
  try {
    main = new vm.Script(source, {
      filename: 'program.ts', lineOffset: -1,
      // the rejection is made in the program's realm: no host object reaches it this way either
      importModuleDynamically: () => { throw program.refusal('import() is not available in run_code'); },
    })
      .runInContext(context, { timeout: frame.compileTimeoutMs });
  } catch (e) {
    // a host-realm error: only its text crosses
    writeFrame(JSON.stringify({ type: 'done', ok: false, error: { class: 'exception',
      message: String(e && e.name) + ': ' + String(e && e.message) } }));
    return;
  }
  program.start(main);
}

function onFrame(text) {
  const frame = JSON.parse(text);
  if (frame.type === 'start' && program === null) run(frame);
  else if (frame.type === 'result' && program !== null) program.deliver(frame.id, frame.ok === true, JSON.stringify(frame.payload));
}

let buffered = Buffer.alloc(0);
process.stdin.on('data', (chunk) => {
  buffered = Buffer.concat([buffered, chunk]);
  while (buffered.length >= 4) {
    const size = buffered.readUInt32BE(0);
    if (buffered.length < 4 + size) break;
    const text = buffered.subarray(4, 4 + size).toString('utf8');
    buffered = buffered.subarray(4 + size);
    onFrame(text);
  }
});
process.stdin.on('end', () => process.exit(0));
