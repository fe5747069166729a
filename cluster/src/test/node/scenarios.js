'use strict';
// Runs scenarios with the official Node.js Cloud Bigtable client against one server and
// prints one JSON line per scenario, in order:
//   {"scenario":NAME,"ok":true,"result":...}  or  {"scenario":NAME,"ok":false,"code":GRPC_CODE,"message":...}
// then {"done":N}. Values are rendered as text (or 0x-hex when not printable), cells with the
// explicit timestamps the scenarios write, so two servers' lines can be compared as they are.
//
// Settings, from the environment:
//   TABULA_ENDPOINT  host:port of the server (required)
//   TABULA_CA        a PEM file of the CA to trust: TLS; absent: plaintext, as to an emulator
//   TABULA_TOKEN     a bearer token sent with every call; absent: none
//   TABULA_TABLE     the table's id (default node-client)
// Arguments: the scenarios to run, in order (default: all). Each scenario is bounded by
// SCENARIO_MS; the process exits when they are done, whatever channels are still open.
// It refuses to run without METADATA_SERVER_DETECTION=none: otherwise the client looks for
// Google's metadata server (169.254.169.254, and a DNS lookup) even when given an endpoint.

if (process.env.METADATA_SERVER_DETECTION !== 'none') {
  console.error('set METADATA_SERVER_DETECTION=none: this client must not look for a metadata server');
  process.exit(2);
}

const fs = require('fs');
const {Bigtable} = require('@google-cloud/bigtable');
const {grpc} = require('google-gax'); // the @grpc/grpc-js instance the client uses

const SCENARIO_MS = 30000;
const endpoint = required('TABULA_ENDPOINT');
const tableId = process.env.TABULA_TABLE || 'node-client';

function required(name) {
  const value = process.env[name];
  if (!value) {
    console.error(`${name} is not set`);
    process.exit(2);
  }
  return value;
}

function client() {
  const options = {projectId: 'p', apiEndpoint: endpoint, metricsEnabled: false};
  if (process.env.TABULA_CA) {
    let channel = grpc.credentials.createSsl(fs.readFileSync(process.env.TABULA_CA));
    if (process.env.TABULA_TOKEN) {
      const token = process.env.TABULA_TOKEN;
      channel = grpc.credentials.combineChannelCredentials(channel,
          grpc.credentials.createFromMetadataGenerator((_params, callback) => {
            const md = new grpc.Metadata();
            md.set('authorization', `Bearer ${token}`);
            callback(null, md);
          }));
    }
    // The node's certificate names localhost; the client dials 127.0.0.1.
    Object.assign(options, {sslCreds: channel, 'grpc.ssl_target_name_override': 'localhost',
      'grpc.default_authority': 'localhost'});
  } else if (process.env.TABULA_TOKEN) {
    console.error('TABULA_TOKEN needs TABULA_CA: grpc-js sends call credentials over TLS only');
    process.exit(2);
  }
  // Without sslCreds the client speaks plaintext to apiEndpoint.
  return new Bigtable(options);
}

const bigtable = client();
const instance = bigtable.instance('i');
const table = instance.table(tableId);

/** Cells are written with explicit timestamps (microseconds, whole milliseconds). */
const T1 = 1000000;
const T2 = 2000000;
const T3 = 3000000;

/** A value as text; the client itself turns 8-byte values (counters) into numbers. */
function text(value) {
  if (typeof value === 'number') {
    return String(value);
  }
  const b = Buffer.isBuffer(value) ? value : Buffer.from(value);
  return /^[\x20-\x7e]*$/.test(b.toString('latin1')) ? b.toString('latin1') : '0x' + b.toString('hex');
}

/**
 * A row as [key, [[family, qualifier, timestamp or '-', value, labels...], ...]]: families by
 * name (the emulator sends them in an order that changes run to run), each family's cells in
 * the server's order.
 */
function render(row, withTime = true) {
  const cells = [];
  for (const family of Object.keys(row.data).sort()) {
    for (const qualifier of Object.keys(row.data[family])) {
      for (const cell of row.data[family][qualifier]) {
        cells.push([family, qualifier, withTime ? String(cell.timestamp) : '-', text(cell.value),
          ...(cell.labels || [])]);
      }
    }
  }
  return [text(row.id), cells];
}

async function rows(options) {
  const [found] = await table.getRows({decode: false, ...options});
  return found.map(r => render(r));
}

const scenarios = {
  async createTable() {
    const [created] = await instance.createTable(tableId, {
      families: [{name: 'cf', rule: {versions: 10}}, {name: 'cf2', rule: {versions: 5}}],
    });
    const [families] = await created.getFamilies();
    return families.map(f => f.id).sort();
  },

  async listTables() {
    const [tables] = await instance.getTables();
    return tables.some(t => t.id === tableId);
  },

  async mutateRow() {
    await table.row('r1').save({cf: {a: {value: 'one', timestamp: T1}}});
    await table.mutate({key: 'r1', method: 'insert',
      data: {cf: {a: {value: 'two', timestamp: T2}, b: {value: 'bee', timestamp: T1}}}});
    return rows({keys: ['r1']});
  },

  async insertBatch() {
    const entries = [];
    for (const key of ['r2', 'r3', 'user#1', 'user#2', 'user#3', 'z']) {
      entries.push({key, data: {cf: {a: {value: `a-${key}`, timestamp: T1}},
        cf2: {x: {value: `x-${key}`, timestamp: T2}}}});
    }
    entries.push({key: 'r2', data: {cf: {a: {value: 'a-r2-newer', timestamp: T3}}}});
    await table.insert(entries);
    return (await rows({})).length;
  },

  async readRow() {
    const [row] = await table.row('r2').get({decode: false});
    const [exists] = await table.row('absent').exists();
    return {row: render(row), absentExists: exists};
  },

  async readAll() {
    return rows({});
  },

  async readRanges() {
    return {
      closedOpen: await rows({ranges: [{start: 'r1', end: 'r3'}]}),
      inclusiveEnd: await rows({start: 'r2', end: 'r3'}),
      exclusiveStart: await rows({ranges: [{start: {value: 'r1', inclusive: false}, end: {value: 'r3',
        inclusive: true}}]}),
      twoRanges: await rows({ranges: [{start: 'r1', end: 'r2'}, {start: 'user#2', end: 'user#3'}]}),
      keys: await rows({keys: ['z', 'r1', 'missing']}),
    };
  },

  async readPrefix() {
    return {prefix: await rows({prefix: 'user#'}), prefixes: await rows({prefixes: ['r', 'z']})};
  },

  async readLimit() {
    return (await rows({limit: 2})).map(r => r[0]);
  },

  async readFilters() {
    const f = filter => rows({filter});
    return {
      family: await f({family: 'cf2'}),
      column: await f({column: 'b'}),
      latestPerColumn: await f([{row: 'r[12]'}, {column: {cellLimit: 1}}]),
      cellsPerRow: await f([{row: {key: 'r1'}}, {row: {cellLimit: 2}}]),
      value: await f({value: 'a-user#.*'}),
      valueRange: await f({value: {start: 'a-r3', end: {value: 'a-user#2', inclusive: false}}}),
      timeRange: await f([{row: 'r2'}, {time: {start: new Date(T2 / 1000), end: new Date(T3 / 1000 + 1)}}]),
      columnRange: await f([{row: 'user#1'}, {column: {family: 'cf2', start: 'w', end: 'y'}}]),
      strip: await f([{row: 'z'}, {value: {strip: true}}]),
      interleave: await f([{row: 'user#2'}, {interleave: [{family: 'cf'}, {column: 'x'}]}]),
      condition: await f([{row: 'r[13]'}, {condition: {test: {column: 'b'}, pass: {family: 'cf'},
        fail: {family: 'cf2'}}}]),
      label: await f([{row: 'r3'}, {family: 'cf'}, {label: 'seen'}]),
    };
  },

  async checkAndMutate() {
    const row = table.row('r1');
    const [matched] = await row.filter({column: 'b', value: 'bee'},
        {onMatch: [{method: 'insert', data: {cf: {c: {value: 'matched', timestamp: T1}}}}],
          onNoMatch: [{method: 'insert', data: {cf: {c: {value: 'not matched', timestamp: T1}}}}]});
    const [missed] = await row.filter({column: 'nope'},
        {onMatch: [{method: 'delete', data: ['cf:a']}],
          onNoMatch: [{method: 'insert', data: {cf2: {d: {value: 'from no match', timestamp: T1}}}}]});
    return {matched, missed, row: await rows({keys: ['r1']})};
  },

  async readModifyWrite() {
    const row = table.row('counter');
    const [first] = await row.createRules([{column: 'cf:n', increment: 5}, {column: 'cf:s', append: 'ab'}]);
    const [second] = await row.increment('cf:n', 3);
    await row.createRules({column: 'cf:s', append: 'cd'});
    // Each rule writes a cell at the server's clock: the newest only (two calls may fall in one
    // millisecond, and then the newer replaces the older), without timestamps.
    const [found] = await table.getRows({decode: false, keys: ['counter'], filter: {column: {cellLimit: 1}}});
    return {first: summary(first), second, row: render(found[0], false)};
  },

  async sampleRowKeys() {
    const [samples] = await table.sampleRowKeys();
    const offsets = samples.map(s => Number(s.offset));
    return {
      some: samples.length > 0,
      lastIsEnd: samples.length > 0 && text(samples[samples.length - 1].key) === '',
      ascending: offsets.every((o, i) => i === 0 || o >= offsets[i - 1]),
    };
  },

  async deleteCells() {
    await table.row('r1').deleteCells(['cf:a']);
    await table.row('r3').deleteCells(['cf2']);
    await table.mutate({key: 'r2', method: 'delete', data: ['cf:a']});
    return rows({keys: ['r1', 'r2', 'r3']});
  },

  async deleteRows() {
    await table.row('z').delete();
    await table.deleteRows('user#');
    return (await rows({})).map(r => r[0]);
  },

  async deleteTable() {
    await table.delete();
    const [exists] = await table.exists();
    return exists;
  },
};

/** A read-modify-write answer's cells, values as numbers where they are counters. */
function summary(apiResponse) {
  const out = [];
  for (const family of apiResponse.row.families) {
    for (const column of family.columns) {
      for (const cell of column.cells) {
        const value = Buffer.from(cell.value);
        out.push([family.name, text(column.qualifier), value.length === 8 ? value.readBigInt64BE().toString()
          : text(value)]);
      }
    }
  }
  return out;
}

function bounded(promise) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error(`no answer in ${SCENARIO_MS} ms`),
        {code: 'TIMEOUT'})), SCENARIO_MS);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

async function main() {
  const names = process.argv.slice(2).length ? process.argv.slice(2) : Object.keys(scenarios);
  for (const name of names) {
    if (!scenarios[name]) {
      console.error(`no scenario ${name}; there are: ${Object.keys(scenarios).join(' ')}`);
      process.exit(2);
    }
  }
  for (const name of names) {
    try {
      const result = await bounded(scenarios[name]());
      console.log(JSON.stringify({scenario: name, ok: true, result}));
    } catch (e) {
      // A failed mutateRows reports its rows' errors; the first one's code stands for it.
      const first = e.errors && e.errors.length ? e.errors[0] : e;
      console.log(JSON.stringify({scenario: name, ok: false, code: first.code ?? null,
        message: String(first.details || first.message)}));
      console.error(e);
    }
  }
  console.log(JSON.stringify({done: names.length}));
  process.exit(0);
}

main();
