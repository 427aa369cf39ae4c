#!/usr/bin/env python3
"""Type-checks the Swift samples of Alamofire's documents against Bluebonnet.

Each block of Fixtures/alamofire-samples/samples.json gets `import Bluebonnet` (and
`import BluebonnetFoundation`) for `import Alamofire` and `Bluebonnet.` for `Alamofire.`. The block
is then type-checked with swiftc against the modules of the debug build (`swift build` first).
The script prints, per era, how many compile. `-v` lists the failures with their first errors.
`--min-5 N --min-4 N` fail the run when fewer compile (a floor for regressions). See
Fixtures/alamofire-samples/README.md.
"""
import json, os, re, shutil, subprocess, sys, tempfile, pathlib, concurrent.futures as cf
ROOT = pathlib.Path(__file__).resolve().parent.parent
HERE = pathlib.Path(__file__).resolve().parent.parent / 'Fixtures/alamofire-samples'
BUILD = ROOT / '.build/debug'
MODS = BUILD / 'Modules'
samples = json.load(open(HERE / 'samples.json'))
overrides = json.load(open(HERE / 'overrides.json')) if (HERE / 'overrides.json').exists() else {}
work = pathlib.Path(tempfile.mkdtemp(prefix='alamofire-samples-'))
# C module maps the Bluebonnet modules need
cflags = []
for mm in list(BUILD.glob('CBluebonnet*.build/module.modulemap')) + list((ROOT / 'Sources').glob('C*/module.modulemap')) + list(BUILD.glob('_Atomics*.build/module.modulemap')):
    cflags += ['-Xcc', f'-fmodule-map-file={mm}']
for inc in (ROOT / 'Sources').glob('C*/include'):
    cflags += ['-Xcc', f'-I{inc}']
def swiftc(args):
    return subprocess.run(['swiftc', '-swift-version', os.environ.get('SV', '5'), '-I', str(MODS), '-I', str(work)] + cflags + args,
                          capture_output=True, text=True)
r = swiftc(['-emit-module', '-module-name', 'Prelude', '-parse-as-library', str(HERE / 'prelude.swift'),
            '-emit-module-path', str(work / 'Prelude.swiftmodule')])
if r.returncode: print(r.stderr); sys.exit(1)

def era(s):
    if s['doc'] == 'AdvancedUsage.md': return '5' if s['n'] <= 37 else '4'
    if s['doc'] == 'Alamofire-2.0-Migration-Guide.md': return '2'
    if '// Alamofire 3' in s['code'] and '// Alamofire 4' not in s['code']: return '3'
    if s['doc'].startswith('Alamofire-4') and s['n'] in (9, 11, 13): return '3'
    return '4'

LOCAL_USER = '''struct User { let username: String; let name: String
  init(username: String) { self.username = username; self.name = username }
  init(json: Any) throws { self.username = ""; self.name = "" } }
'''
def transform_dep(key):
    doc, n = key.split('#')
    d = next(x for x in samples if x['doc'] == doc and x['n'] == int(n))
    code = d['code'].replace('import Alamofire', '')
    return re.sub(r'\bAlamofire\.', 'Bluebonnet.', code)

def transform(s):
    key = f"{s['doc']}#{s['n']}"
    o = overrides.get(key, {})
    code = o.get('code', s['code'])
    if o.get('kind') == 'skip': return None, o.get('why', '')
    if '// Alamofire 4' in code:
        code = code.split('// Alamofire 4', 1)[1].split('// Alamofire 3')[0]
    code = code.replace('import Alamofire', '')
    code = re.sub(r'\bAlamofire\.', 'Bluebonnet.', code)
    code = code.replace('(...)', '("https://httpbin.org/get")')
    code = '\n'.join('// ...' if l.strip() == '...' else l for l in code.splitlines())
    for a, b in o.get('transform', []): code = code.replace(a, b)
    if o.get('kind') == 'signature':
        code = 'protocol _Signature {\n' + code + '\n}'
    if o.get('wrap'):
        code = o['wrap'].replace('$CODE', code)
    for dep in o.get('after', []):
        code = transform_dep(dep) + '\n' + code
    local = '' if re.search(r'(struct|class|enum) User\b', code) else LOCAL_USER
    imports = 'import Foundation\nimport Bluebonnet\n' + ('import BluebonnetFoundation\n' if os.environ.get('BF', '1') == '1' else '')
    return imports + 'import Prelude\n' + local + code + '\n', None

def check(s):
    src, why = transform(s)
    if src is None: return s, 'skip', why
    name = f"{s['doc'].split('.')[0].replace('-', '_')}_{s['n']}"
    d = work / name; d.mkdir(exist_ok=True)
    (d / 'main.swift').write_text(src)
    r = swiftc(['-typecheck', str(d / 'main.swift')])
    errs = [l for l in r.stderr.splitlines() if ': error:' in l]
    return s, 'ok' if r.returncode == 0 else 'fail', errs
results = []
with cf.ThreadPoolExecutor(2) as ex:
    results = list(ex.map(check, samples))
summary = {}
for s, st, info in results:
    e = era(s); summary.setdefault(e, {'ok': 0, 'fail': 0, 'skip': 0}); summary[e][st] += 1
    if st == 'fail' and '-v' in sys.argv:
        print(f"FAIL {s['doc']}#{s['n']} ({s['heading']})")
        for l in info[:4]: print('   ', l.split('main.swift:')[-1])
    if st == 'skip' and '-v' in sys.argv: print(f"SKIP {s['doc']}#{s['n']}: {info}")
print(json.dumps(summary))
shutil.rmtree(work, ignore_errors=True)
def floor(flag):
    return int(sys.argv[sys.argv.index(flag) + 1]) if flag in sys.argv else 0
for era, flag in (('5', '--min-5'), ('4', '--min-4')):
    got = summary.get(era, {}).get('ok', 0)
    if got < floor(flag):
        print(f'FAIL: {got} Alamofire {era}.x samples compile, fewer than the floor {floor(flag)}', file=sys.stderr)
        sys.exit(1)
