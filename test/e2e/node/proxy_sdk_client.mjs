// OpenAI's own Node client library against zeus proxy (run by test/e2e/proxy_openai_sdk.sh):
// what the library returns through the proxy must equal what it returns from the upstream
// directly, whatever the proxy adds (headers, HTTP trailers on streams, and when asked
// usage.energy_j and an SSE comment line before [DONE]); the proxy's own errors must reach the
// library's error with their message.
// Usage: node proxy_sdk_client.mjs DIRECT_PORT PROXY_PORT DOWN_PORT MAX_BODY
//   DOWN_PORT: a proxy whose upstream is down, with --max-body MAX_BODY.
// Prints one line per check; exits 1 when one failed.
import OpenAI from 'openai';

const [directPort, proxyPort, downPort, maxBody] = process.argv.slice(2).map(Number);
const client = (port) =>
  new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: 'unused', maxRetries: 0 });
const direct = client(directPort);
const proxied = client(proxyPort);
const down = client(downPort);
const asked = { headers: { 'X-Zeus-Energy': '1' } };

let failures = 0;
function check(ok, what, detail = '') {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}${ok || !detail ? '' : ': ' + detail}`);
  if (!ok) failures += 1;
}
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

// duration_s is the fake upstream's own field (how long the answer takes); the library sends
// fields it does not know as they are.
const chat = (n, extra = {}) => ({
  model: 'fake-model',
  messages: [{ role: 'user', content: `count to ${n}` }],
  max_tokens: n,
  duration_s: 0.05,
  ...extra,
});

async function chunks(c, params, options) {
  const out = [];
  for await (const chunk of await c.chat.completions.create({ ...params, stream: true }, options)) {
    out.push(chunk);
  }
  return out;
}
const text = (list) => list.map((c) => c.choices[0]?.delta?.content ?? '').join('');

// A whole answer: the same object, and the energy in headers only.
{
  const want = await direct.chat.completions.create(chat(6));
  const { data, response } = await proxied.chat.completions.create(chat(6)).withResponse();
  check(same(data, want), 'whole answer equals the direct one', JSON.stringify(data));
  const joules = Number(response.headers.get('x-zeus-energy-j'));
  check(joules > 0, 'X-Zeus-Energy-J header', response.headers.get('x-zeus-energy-j'));
  check(response.headers.get('x-zeus-tokens') === '6', 'X-Zeus-Tokens header',
        response.headers.get('x-zeus-tokens'));
  check(data.usage.energy_j === undefined, 'no usage.energy_j unless asked');
}

// Asked with X-Zeus-Energy: 1, usage.energy_j joins the usage the library returns.
{
  const want = await direct.chat.completions.create(chat(5));
  const got = await proxied.chat.completions.create(chat(5), asked);
  check(typeof got.usage.energy_j === 'number' && got.usage.energy_j > 0,
        'usage.energy_j when asked', JSON.stringify(got.usage));
  const { energy_j: _, ...usage } = got.usage;
  check(same({ ...got, usage }, want), 'the rest of the asked answer equals the direct one');
}

// Streams: every chunk the library yields, the usage chunk included, equals the direct stream's;
// the proxy's trailers and, when asked, its SSE comment line are invisible to the library.
{
  const params = chat(8, { stream_options: { include_usage: true } });
  const want = await chunks(direct, params);
  const got = await chunks(proxied, params);
  check(want.length === 9 && text(want) === 'tok0 tok1 tok2 tok3 tok4 tok5 tok6 tok7 ',
        'the direct stream as the fake sends it', `${want.length} chunks, '${text(want)}'`);
  check(same(got, want), 'streamed chunks equal the direct ones', `${got.length} chunks`);
  const gotAsked = await chunks(proxied, params, asked);
  check(same(gotAsked, want), 'asked stream (SSE comment before [DONE]) equals the direct one',
        `${gotAsked.length} chunks`);
  check(got.at(-1)?.usage?.completion_tokens === 8, 'the usage chunk', JSON.stringify(got.at(-1)));
}

// Eight streams at once, of different lengths.
{
  const lengths = [3, 5, 7, 9, 11, 13, 15, 17];
  const want = await Promise.all(lengths.map((n) => chunks(direct, chat(n))));
  const got = await Promise.all(lengths.map((n) => chunks(proxied, chat(n))));
  const equal = lengths.filter((_, i) => same(got[i], want[i])).length;
  check(equal === lengths.length, '8 concurrent streams equal the direct ones', `${equal} of 8`);
}

// The legacy completions route, streamed and whole.
{
  const params = { model: 'fake-model', prompt: 'hi', max_tokens: 4, duration_s: 0.05 };
  const wantWhole = await direct.completions.create(params);
  check(same(await proxied.completions.create(params), wantWhole), '/v1/completions whole');
  const collect = async (c) => {
    const out = [];
    const stream = await c.completions.create({ ...params, stream: true });
    for await (const chunk of stream) out.push(chunk);
    return out;
  };
  const want = await collect(direct);
  check(want.length === 4 && same(await collect(proxied), want), '/v1/completions streamed',
        `${want.length} chunks`);
}

// The proxy's own errors, as the library reports them.
async function failure(promise) {
  try {
    await promise;
    return null;
  } catch (e) {
    return e;
  }
}
{
  const e = await failure(down.chat.completions.create(chat(3)));
  check(e instanceof OpenAI.APIError && e.status === 502, 'upstream down: APIError 502',
        e && `${e.constructor.name} ${e.status} ${e.message}`);
  check(e?.message?.includes('did not answer') && e?.type === 'server_error',
        "upstream down: the library's message names the cause", e?.message);
  const big = chat(3, { messages: [{ role: 'user', content: 'x'.repeat(maxBody) }] });
  const t = await failure(down.chat.completions.create(big));
  check(t instanceof OpenAI.APIError && t.status === 413, 'body over --max-body: APIError 413',
        t && `${t.constructor.name} ${t.status} ${t.message}`);
  check(t?.message?.includes(`limit of ${maxBody}`) && t?.type === 'invalid_request_error',
        "body over --max-body: the library's message names the limit", t?.message);
}

// The proxy keeps serving after them.
check(same(await proxied.chat.completions.create(chat(2)),
           await direct.chat.completions.create(chat(2))), 'still serving');

console.log(failures ? `${failures} check(s) failed` : 'every check passed');
process.exit(failures ? 1 : 0);
