#!/bin/bash
# refactor-goldens.sh BIN OUT: writes into OUT the outputs a refactor or a speed-up must leave
# byte-identical (schedules of every algorithm on several demands and fabrics, emulate --json and
# --timeline under two reconfiguration models, two sweeps, and verify on corrupted schedules and
# timelines). Run it with the binary before the change and after, then diff -r the two folders.
# Needs python3 for the corrupted inputs.
set -u
bin=$(realpath "$1"); out=$2; mkdir -p "$out"; cd "$out"
algos="tetris bff bvn bvn-maxmin bvn-sinkhorn maxweight snb solstice sunflow tetris+"
$bin trace gen --model mixtral-8x22b --gpus 32 --layers 1 --tokens-per-gpu 512 --expert-per-gpu -o d32.json >/dev/null 2>&1
python3 - <<'PY'
import random
random.seed(7)
n=24
with open('r24.csv','w') as f:
    for i in range(n):
        f.write(','.join('0' if i==j or random.random()<0.3 else str(random.randint(1,1<<20)) for j in range(n))+'\n')
PY
for a in $algos; do
  for m in 0 5 17; do $bin schedule --algo $a --matrix $m -o s-$a-m$m.json 2>/dev/null; done
  $bin schedule --algo $a --demand d32.json --matrix 0 -o s-$a-d32.json 2>/dev/null
  $bin schedule --algo $a --demand r24.csv --reconfig 1us -o s-$a-r24.json 2>/dev/null
  $bin schedule --algo $a --matrix 3 --fabric crossbar -o s-$a-xbar.json 2>/dev/null
done
$bin schedule --algo tetris --no-partial --naive-routing --matrix 2 -o s-tetris-abl.json 2>/dev/null
for m in 0 5; do
  mkdir -p tl-m$m tlc-m$m
  $bin emulate --algo all --matrix $m --json e-m$m.json --timeline tl-m$m --progress off > e-m$m.txt 2>/dev/null
  $bin emulate --algo all --matrix $m --reconfig-model controller --tr 1us --tw 10us --json ec-m$m.json --timeline tlc-m$m --progress off > ec-m$m.txt 2>/dev/null
done
$bin emulate --algo all --demand r24.csv --json e-r24.json --progress off > e-r24.txt 2>/dev/null
$bin emulate --algo all --demand d32.json --matrix 0 --json e-d32.json --progress off > e-d32.txt 2>/dev/null
$bin emulate --algo all --matrix 1 --fabric crossbar --json e-xbar.json --progress off > e-xbar.txt 2>/dev/null
$bin emulate --algo tetris --matrix 1 --no-partial --json e-np.json --progress off > e-np.txt 2>/dev/null
$bin emulate --schedule s-bvn-m0.json --json e-sched.json --progress off > e-sched.txt 2>/dev/null
$bin sweep --out sw --progress off > sweep.txt 2>/dev/null
$bin sweep --algo tetris,bvn,snb --demand d32.json --reconfig 1us,1ms --out sw32 --progress off > sweep32.txt 2>/dev/null
# corrupted schedules: verify messages
python3 - <<'PY'
import json
s=json.load(open('s-tetris-m0.json'))
c=s['circuits']
b=json.loads(json.dumps(s)); b['circuits'][0]['path'][1][1]+=1; json.dump(b,open('bad1.json','w'),indent=2)
b=json.loads(json.dumps(s)); b['circuits'][1]['path']=b['circuits'][1]['path'][:-1]; json.dump(b,open('bad2.json','w'),indent=2)
b=json.loads(json.dumps(s)); b['circuits'][2]['path']=[]; b['circuits'][3]['dst']=b['circuits'][4]['dst']; json.dump(b,open('bad3.json','w'),indent=2)
b=json.loads(json.dumps(s)); b['circuits'][5]['path'][0][2]=1-b['circuits'][5]['path'][0][2]; b['circuits'][6]['path']=None; json.dump(b,open('bad4.json','w'),indent=2)
s=json.load(open('s-bvn-m0.json'))
b=json.loads(json.dumps(s)); b['circuits'][1]['group']=b['circuits'][0]['group']; b['circuits'][1]['path']=b['circuits'][0]['path']; json.dump(b,open('bad5.json','w'),indent=2)
PY
for f in bad1 bad2 bad3 bad4 bad5; do $bin verify $f.json --matrix 0 > v-$f.txt 2>&1; echo "rc=$?" >> v-$f.txt; done
# corrupted timelines: verify --timeline messages
python3 - <<'PY'
import json
for algo in ('tetris','bvn'):
    r=json.load(open('tl-m0/m0-%s.timeline.json'%algo))
    t=r['timeline']
    c=t['circuits']
    c[3]['transmit_start']=c[2]['transmit_start']; c[3]['end']=c[2]['end']
    c[7]['end']=c[7]['transmit_start']*0.5
    if t['switch_changes']:
        t['switch_changes'][0]['to']='bar' if t['switch_changes'][0]['to']=='cross' else 'cross'
        t['switch_changes'][-1]['start']=0
    c[9]['circuit']=c[8]['circuit']
    json.dump(r,open('badtl-%s.json'%algo,'w'),indent=1)
    r=json.load(open('tl-m0/m0-%s.timeline.json'%algo))
    t=r['timeline']; c=t['circuits']
    for k in (3,11,20):
        c[k]['transmit_start']=c[k-1]['transmit_start']; c[k]['end']=c[k-1]['end']+1e-6
    for k in (0,5,9):
        if k < len(t['switch_changes']):
            t['switch_changes'][k]['end']+=2e-4
    json.dump(r,open('badtl2-%s.json'%algo,'w'),indent=1)
PY
for a in tetris bvn; do for v in badtl badtl2; do $bin verify tl-m0/m0-$a.schedule.json --matrix 0 --timeline $v-$a.json > vt-$v-$a.txt 2>&1; echo "rc=$?" >> vt-$v-$a.txt; done; done
