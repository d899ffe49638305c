# The offline evaluation of step 53 (docs/gemm-notes.md): the rule's pick for each of the 95 small-C shapes, from
# gemm/dmma_rule.cpp compiled on the host with 2026-11-28-rule-picks-offline.cpp (environment knobs of
# 2026-11-28-dmma-tma-thin-speed-knobs-a-b-on-c3d811e.patch), looked up in the every-tile results
# (2026-11-28-h100-sm90-small-c-every-tile-{1,2}-c3d811e830f2.json: % of cuBLAS of each tuning variant).
#   g++ -std=c++20 -I. docs/results/2026-11-28-rule-picks-offline.cpp gemm/dmma_rule.cpp -o /tmp/picks
#   python3 docs/results/2026-11-28-rule-picks-offline.py
import glob, json, math, os, subprocess
here = os.path.dirname(os.path.abspath(__file__))
v = {}
for f in sorted(glob.glob(os.path.join(here, '2026-11-28-h100-sm90-small-c-every-tile-*.json'))):
    for b in json.load(open(f))['benchmarks']:
        if b['variant'] == 'cublas' or b.get('status') != 'ok':
            continue
        k = '%dx%dx%d' % (b['M'], b['N'], b['K'])
        v.setdefault(k, {})[b['variant'].replace('dmma_tma_', '')] = 100 * b['vs_anchor']
keys = list(v)


def geo_mean(env):
    out = subprocess.run(['/tmp/picks'] + keys, capture_output=True, text=True, env={**os.environ, **env}).stdout
    picks = dict(line.split() for line in out.splitlines())
    xs = [v[k][picks[k]] for k in keys]
    return math.exp(sum(math.log(x / 100) for x in xs) / len(xs))


for env in [{}, {'X_THIN_SPLIT': '1.0'}, {'X_THIN_SPLIT': '1.0', 'X_PAD_MODE': '1', 'X_THIN_PAD': '0.85'},
            {'X_THIN_SPLIT': '1.0', 'X_PAD_MODE': '1', 'X_THIN_PAD': '0.85', 'X_RO_SPLIT': '2'}]:
    print(env, '%.4f' % geo_mean(env))
