#!/usr/bin/env python3
"""Regenerates fuzz/corpus/ and fuzz/validate.dict from schemas/ (see docs/fuzzing.md).

    python3 fuzz/make_corpus.py            # from the repository root

Seeds, all small:
  <endpoint>__<model>__min.json   the required properties only (valid unless a rule says no)
  <endpoint>__<model>__full.json  every property (some break a cross-field rule on purpose)
  <endpoint>__bad__<kind>.json    wrong types, out-of-range values, unknown keys, retired or
                                  missing model
  media__*, utf8__*, json__*, depth__*, numbers__*, ...: hand-written edge cases of the media
                                  strings, UTF-8/UTF-16, JSON syntax and nesting.
The dictionary holds JSON punctuation, every property name, enum value and model of the schemas,
and the prefixes of the media strings.
"""
import glob
import json
import os
import shutil
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, 'fuzz', 'corpus')
DICT = os.path.join(ROOT, 'fuzz', 'validate.dict')

docs = {os.path.basename(f): json.load(open(f, encoding='utf-8'))
        for f in glob.glob(os.path.join(ROOT, 'schemas', '*.json'))}
docs = {k: v for k, v in docs.items() if '$schema' in v}


def resolve(doc, ref):
    target, _, frag = ref.partition('#')
    name = os.path.basename(target) if target else doc
    node = docs[name]
    for part in frag.split('/')[1:]:
        node = node[part.replace('~1', '/').replace('~0', '~')]
    return name, node


def deref(doc, node):
    while isinstance(node, dict) and '$ref' in node:
        override = {k: v for k, v in node.items() if k == 'default'}
        doc, node = resolve(doc, node['$ref'])
        if override:
            node = dict(node, **override)
    return doc, node


MEDIA = {'image': 'https://example.com/image.jpg', 'video': 'https://example.com/video.mp4',
         'audio': 'https://example.com/audio.mp3'}


def sample(doc, node, full):
    """A value for `node`: the first enum value, the minimum, the required (or all) properties."""
    doc, node = deref(doc, node)
    if 'const' in node:
        return node['const']
    if 'enum' in node:
        return node['enum'][0]
    if 'oneOf' in node or 'anyOf' in node:
        return sample(doc, (node.get('oneOf') or node.get('anyOf'))[0], full)
    t = node.get('type')
    if isinstance(t, list):
        t = [x for x in t if x != 'null'][0]
    if t == 'string':
        fmt = node.get('format')
        if fmt == 'media':
            return MEDIA[node['x-media-kind']]
        if fmt == 'uuid':
            return '3f2c1b7e-8a4d-4c3b-9e2f-1a2b3c4d5e6f'
        if fmt == 'date-time':
            return '2024-05-01T12:00:00Z'
        if fmt == 'date':
            return '2024-05-01'
        if fmt in ('uri', 'https-url'):
            return 'https://example.com/x'
        if 'pattern' in node:
            return 'tag_one'
        n = max(node.get('minLength', 1), 1)
        s = 'A calm lake at dawn'
        return s if n <= len(s) <= node.get('maxLength', 10**9) else 'a' * n
    if t == 'integer':
        return node.get('minimum', 1)
    if t == 'number':
        return node.get('minimum', 1)
    if t == 'boolean':
        return False
    if t == 'array':
        n = max(node.get('minItems', 0), 1 if full else 0)
        return [sample(doc, node['items'], full) for _ in range(n)] if 'items' in node else []
    if t == 'object':
        return {k: sample(doc, v, full) for k, v in node.get('properties', {}).items()
                if full or k in node.get('required', [])}
    return None


def flip(v):
    """A value of another JSON type."""
    if isinstance(v, bool):
        return 'true'
    if isinstance(v, (int, float)):
        return str(v)
    if isinstance(v, str):
        return 12
    if isinstance(v, list):
        return {'0': v[0] if v else None}
    if isinstance(v, dict):
        return [v]
    return 0


def edge(v, key):
    """A value of the same type just outside what schemas usually allow."""
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return 4294967296 if key == 'seed' else -1
    if isinstance(v, float):
        return -0.5
    if isinstance(v, str):
        if v.startswith('https://'):
            return 'http://example.com/a.png'
        return '\U0001F600' * 501  # 1002 UTF-16 units, 501 code points
    if isinstance(v, list):
        return v * 20
    if isinstance(v, dict):
        return dict(v, extra=True)
    return v


PNG = ('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5E'
       'rkJggg==')


def image_body(uri, **extra):
    body = {'model': 'gen4_image', 'promptText': '@cat on a sofa', 'ratio': '1024:1024',
            'referenceImages': [{'uri': uri, 'tag': 'cat'}]}
    body.update(extra)
    return json.dumps(body)


def body(**extra):
    b = {'model': 'gen4_image', 'promptText': 'x', 'ratio': '1024:1024'}
    b.update(extra)
    return json.dumps(b)


HAND_WRITTEN = {
    'media__data_uri_ok.json': image_body('data:image/png;base64,' + PNG),
    'media__data_uri_params.json': image_body('data:image/png;name=a.png;q=1;base64,' +
                                              PNG.rstrip('=')),
    'media__data_uri_nobase64.json': image_body('data:image/png,' + PNG),
    'media__data_uri_notype.json': image_body('data:;base64,' + PNG),
    'media__data_uri_video.json': image_body('data:video/mp4;base64,AAAA'),
    'media__data_uri_badchar.json': image_body('data:image/png;base64,AA*A'),
    'media__data_uri_tail.json': image_body('data:image/PNG;BASE64,AAAAA'),
    'media__upload_ok.json': image_body('genhost://abc-DEF_123.~xyz'),
    'media__upload_bad.json': image_body('genhost://a b'),
    'media__http.json': image_body('http://example.com/image.jpg'),
    'media__ftp.json': image_body('ftp://example.com/image.jpg'),
    'media__ipv6_port.json': image_body('https://[::1]:8080/image.jpg?x=1#y'),
    'media__userinfo_port.json': image_body('https://user:pw@example.com:99999/image.jpg'),
    'media__short.json': image_body('https://a.b'),
    'media__notaurl.json': image_body('not a url'),
    'tag__bad.json': body(referenceImages=[
        {'uri': MEDIA['image'], 'tag': '1x'}, {'uri': MEDIA['image'], 'tag': 'abcdefghijklmnopq'},
        {'uri': 5}, {}]),
    'utf16__emoji.json': body(promptText='\U0001F600' * 500),
    'utf16__escapes.json': '{"model":"gen4_image","promptText":"\\ud83d\\ude00\\u00e9\\n\\"",'
                           '"ratio":"1024:1024"}',
    'utf8__invalid.bin': b'{"model":"gen4_image","promptText":"\xff\xfe","ratio":"1024:1024"}',
    'utf8__overlong.bin': b'{"model":"gen4_image","promptText":"\xc0\xaf","ratio":"1024:1024"}',
    'utf8__lone_surrogate.json': '{"model":"gen4_image","promptText":"\\ud800",'
                                 '"ratio":"1024:1024"}',
    'numbers__float_seed.json': body()[:-1] + ',"seed":4294967295.0}',
    'numbers__huge.json': body()[:-1] + ',"seed":1e400}',
    'numbers__u64.json': body()[:-1] + ',"seed":18446744073709551616}',
    'numbers__neg0.json': body()[:-1] + ',"seed":-0}',
    'numbers__frac.json': body()[:-1] + ',"seed":1.5e0}',
    'json__duplicate_keys.json': '{"model":"gen4_image","model":"gen4_image_turbo",'
                                 '"promptText":"x","ratio":"1024:1024"}',
    'json__trailing.json': body() + ' x',
    'json__empty_object.json': '{}',
    'json__null.json': 'null',
    'json__string.json': '"gen4_image"',
    'json__empty.bin': b'',
    'json__truncated.json': body()[:40],
    'json__comment.json': '/* c */ {"model":"gen4_image"}',
    'json__bom.bin': b'\xef\xbb\xbf' + body().encode(),
    'json__whitespace.json': ' \t\r\n' + json.dumps(json.loads(body()), indent=1) + ' \n',
    'depth__64.json': '[' * 64 + ']' * 64,
    'depth__65.json': '{"a":' * 65 + '1' + '}' * 65,
    'depth__brackets_in_string.json': body(promptText='[{' * 100 + '"'),
    'array__many.json': body()[:-1] + ',"referenceImages":[' + ','.join(['{}'] * 200) + ']}',
    'keys__many.json': json.dumps({'model': 'gen4_image', **{f'k{i}': i for i in range(50)}}),
    'garbage__bytes.bin': bytes(range(256)),
}


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)

    def write(name, data):
        with open(os.path.join(OUT, name), 'wb') as f:
            f.write(data if isinstance(data, bytes) else data.encode('utf-8'))

    endpoints = sorted((d['x-endpoint']['name'], name, d) for name, d in docs.items()
                       if 'x-endpoint' in d)
    for endpoint, name, d in endpoints:
        branches = d.get('oneOf') or d.get('anyOf') or [d]
        for branch in branches:
            _, node = deref(name, branch)
            model = node.get('title') or 'root'
            for variant, full in (('min', False), ('full', True)):
                write(f'{endpoint}__{model}__{variant}.json',
                      json.dumps(sample(name, branch, full), ensure_ascii=False))
        full = sample(name, branches[0], True)
        if not isinstance(full, dict):
            continue
        bad = {
            'types': {k: (v if k == 'model' else flip(v)) for k, v in full.items()},
            'edges': {k: (v if k == 'model' else edge(v, k)) for k, v in full.items()},
            'unknown': dict(full, promptTxt='typo', Model='x', **{'': 1}),
        }
        if 'model' in full:
            bad['retired'] = dict(full, model='gen3a_turbo')
            bad['nomodel'] = {k: v for k, v in full.items() if k != 'model'}
            bad['modeltype'] = dict(full, model=['gen4.5'])
        if endpoint == 'text_to_image':
            bad['array'] = [full]
        for kind, value in bad.items():
            write(f'{endpoint}__bad__{kind}.json', json.dumps(value, ensure_ascii=False))
    for name, data in HAND_WRITTEN.items():
        write(name, data)

    # The dictionary: JSON tokens, then every name and value the schemas know.
    keys, values = set(), set()

    def walk(n):
        if isinstance(n, dict):
            for k, v in n.items():
                if k == 'properties':
                    keys.update(v.keys())
                elif k == 'enum':
                    values.update(x for x in v if isinstance(x, str))
                elif k == 'const' and isinstance(v, str):
                    values.add(v)
                elif k in ('x-retired', 'mapping'):
                    values.update(v.keys())
                walk(v)
        elif isinstance(n, list):
            for x in n:
                walk(x)

    for d in docs.values():
        walk(d)
    tokens = ['{', '}', '[', ']', ':', ',', '"', '\\"', '\\\\', '\\u0000', '\\ud83d\\ude00',
              '\\ud800', 'true', 'false', 'null', '-0', '1e400', '0.5', '4294967295',
              '4294967296', '18446744073709551616', '-9223372036854775809',
              'https://', 'http://', 'genhost://', 'data:', 'data:image/png;base64,',
              'data:video/mp4;base64,', 'data:audio/mpeg;base64,', ';base64,', '==',
              'example.com', '[::1]', ':443', '\xf0\x9f\x98\x80', '\xff', '\xc0\xaf']

    def quote(s):
        out = ''
        for ch in s.encode('utf-8', 'surrogateescape') if isinstance(s, str) else s:
            c = chr(ch)
            out += c if 0x20 <= ch < 0x7f and c not in '"\\' else '\\x%02x' % ch
        return '"' + out + '"'

    with open(DICT, 'w', encoding='ascii') as f:
        f.write('# libFuzzer dictionary for fuzz/validate_fuzz.cpp; generated by '
                'fuzz/make_corpus.py.\n')
        for t in tokens:
            raw = t.encode('latin-1') if any(ord(c) > 0x7f for c in t) else t.encode()
            f.write(quote(raw) + '\n')
        for k in sorted(keys):
            f.write(quote(json.dumps(k)) + '\n')
        for v in sorted(values):
            f.write(quote(json.dumps(v, ensure_ascii=False)) + '\n')
    print(f'{len(os.listdir(OUT))} seeds in {OUT}, {len(tokens) + len(keys) + len(values)} '
          f'dictionary entries in {DICT}', file=sys.stderr)


if __name__ == '__main__':
    main()
