// Verifies genhost's media-plane tokens with LiveKit's own server SDK (npm livekit-server-sdk,
// pinned in package.json): the token consume answers a browser, and the one connect_backend
// answers a backend handler, pass TokenVerifier with genhost's issuer and the cluster's media
// secret, and carry LiveKit's claims (sub, the video grant with room and roomJoin); the same
// token fails with another secret.
//
// Run by the gtest NodeSdk.* (tests/http/uploads_test.cpp) through run_node_sdk.sh.
// Environment: GENHOST_URL, GENHOST_KEY, GENHOST_MEDIA_SECRET. Prints one JSON line with what it
// saw, or {"error": ...}; exits 1 on an unexpected error.
import { TokenVerifier } from 'livekit-server-sdk';

const base = process.env.GENHOST_URL;
const headers = {
  Authorization: `Bearer ${process.env.GENHOST_KEY}`,
  'X-Service-Version': '2024-11-06',
  'Content-Type': 'application/json',
};

const out = {};
try {
  const created = await (await fetch(`${base}/v1/realtime_sessions`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ model: 'gwm1_avatars', avatar: { type: 'service-preset', presetId: 'tennis-coach' } }),
  })).json();
  let session;
  for (let i = 0; i < 80; i++) {
    session = await (await fetch(`${base}/v1/realtime_sessions/${created.id}`, { headers })).json();
    if (session.status === 'READY') break;
    await new Promise((r) => setTimeout(r, 250));
  }
  const consumed = await (await fetch(`${base}/v1/realtime_sessions/${created.id}/consume`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${session.sessionKey}` },
  })).json();
  const backend = await (await fetch(`${base}/v1/realtime_sessions/${created.id}/connect_backend`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${process.env.GENHOST_KEY}` },
  })).json();
  const verifier = new TokenVerifier('genhost', process.env.GENHOST_MEDIA_SECRET);
  out.id = created.id;
  out.user = await verifier.verify(consumed.token);
  out.backend = await verifier.verify(backend.token);
  try {
    await new TokenVerifier('genhost', 'another secret of the same kind').verify(consumed.token);
    out.wrongSecret = 'accepted';
  } catch (e) {
    out.wrongSecret = 'refused';
  }
  try {
    await new TokenVerifier('someone-else', process.env.GENHOST_MEDIA_SECRET).verify(consumed.token);
    out.wrongIssuer = 'accepted';
  } catch (e) {
    out.wrongIssuer = 'refused';
  }
  await fetch(`${base}/v1/realtime_sessions/${created.id}`, { method: 'DELETE', headers });
  console.log(JSON.stringify(out));
} catch (e) {
  console.log(JSON.stringify({ error: String(e), seen: out }));
  process.exit(1);
}
