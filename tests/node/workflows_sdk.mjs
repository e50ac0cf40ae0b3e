// Drives the official Node client (@runwayml/sdk, pinned in package.json) against a running
// genhost as a new user would: a workflow is published through genhost's stand-in endpoint
// (POST /_genhost/workflows; the API cannot create workflows), then workflows.list, retrieve and
// run (with a primitive override), workflowInvocations.retrieve and its waiter
// (waitForTaskOutput), every node's output fetched; a run with an override of the wrong type and
// a workflow that does not exist.
//
// Run by the gtest NodeSdk.* (tests/http/uploads_test.cpp) through run_node_sdk.sh.
// Environment: GENHOST_URL, GENHOST_KEY. Prints one JSON line with what it saw, or
// {"error": {...}}; exits 1 on an unexpected error.
import { BadRequestError, NotFoundError } from '@runwayml/sdk';
import { client, failure } from './sdk_common.mjs';

const prompt = '0c8f6a52-4f7e-4d0b-9a51-2d3c4b5a6f70';
const still = '1d9a7b63-5a8f-4e1c-8b62-3e4d5c6b7a81';
const clipA = '2eab8c74-6b9a-4f2d-9c73-4f5e6d7c8b92';
const clipB = '3fbc9d85-7cab-4a3e-8d84-5a6f7e8d9ca3';
const publication = {
  name: 'Still and two clips',
  description: 'One image, animated twice',
  graph: {
    version: 1,
    nodes: [
      { id: prompt, name: 'Prompt', type: 'text', value: 'a lighthouse at dusk' },
      { id: still, name: 'Still', type: 'generation', endpoint: 'text_to_image',
        input: { model: 'gen4_image', ratio: '1280:720' } },
      { id: clipA, name: 'Clip A', type: 'generation', endpoint: 'image_to_video',
        input: { model: 'gen4_turbo', ratio: '1280:720', duration: 2 } },
      { id: clipB, name: 'Clip B', type: 'generation', endpoint: 'image_to_video',
        input: { model: 'gen4_turbo', ratio: '1280:720', duration: 2, promptText: 'slow pan' } },
    ],
    edges: [
      { source: { node: prompt, output: 'value' }, target: { node: still, field: 'promptText' } },
      { source: { node: still, output: 'output' }, target: { node: clipA, field: 'promptImage' } },
      { source: { node: still, output: 'output' }, target: { node: clipB, field: '/promptImage' } },
    ],
  },
};

const out = {};
try {
  const published = await fetch(`${process.env.GENHOST_URL}/_genhost/workflows`, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${process.env.GENHOST_KEY}`,
      'X-Service-Version': '2024-11-06',
      'Content-Type': 'application/json',
    },
    body: JSON.stringify(publication),
  });
  out.publishStatus = published.status;
  const version = await published.json();

  out.list = await client.workflows.list();
  out.retrieved = await client.workflows.retrieve(version.id);
  const before = (await client.organization.retrieve()).creditBalance;
  const run = await client.workflows.run(version.id, {
    nodeOutputs: { [prompt]: { value: { type: 'primitive', value: 'a red lighthouse at night' } } },
  });
  out.run = run;
  out.firstLook = await client.workflowInvocations.retrieve(run.id);
  const done = await client.workflowInvocations.retrieve(run.id).waitForTaskOutput({ timeout: 240000 });
  out.done = done;
  out.fetched = {};
  for (const [node, urls] of Object.entries(done.output)) {
    const r = await fetch(urls[0]);
    out.fetched[node] = { status: r.status, type: r.headers.get('content-type'),
                          bytes: (await r.arrayBuffer()).byteLength };
  }
  out.spent = before - (await client.organization.retrieve()).creditBalance;
  out.badOverride = await failure(
    client.workflows.run(version.id, {
      nodeOutputs: { [prompt]: { value: { type: 'primitive', value: 42 } } },
    }),
    BadRequestError);
  out.missing = await failure(
    client.workflows.retrieve('00000000-0000-4000-8000-000000000000'),
    NotFoundError);
} catch (e) {
  out.error = { name: e.constructor.name, message: e.message, status: e.status, body: e.error };
}
console.log(JSON.stringify(out));
process.exit(out.error ? 1 : 0);
