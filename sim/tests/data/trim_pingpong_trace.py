# SPDX-License-Identifier: BSD-3-Clause
# Copyright (c) the tca authors
# Keeps some rows of a two-rank tca-pingpong trace (TCA_TRACE) and closes the gaps the other rows
# leave, so the result reads as a run of those rows alone (sim/tests/data/pingpong-h200-shared):
#   python3 trim_pingpong_trace.py TRACE_DIR OUT_DIR 'cuda.ce.gpu>gpu.8,cuda.ce.cpu>gpu.32768,...'
# A row is a run of kicks of one shape (path.skind>dkind.bytes, as tca-sim replay --segments
# names them); it ends where the later of rank 0's last call and rank 1's last kick or drain of
# that shape ends. An event belongs to the row its end falls in, clipped to the row's start.
import sys
src, dst, keep = sys.argv[1], sys.argv[2], sys.argv[3].split(',')
ranks = []
for r in (0, 1):
    lines = open(f'{src}/rank-{r}.trace').read().splitlines()
    hdr = dict(kv.split('=') for kv in lines[0].split()[2:])
    start = int(hdr['start'])
    ev = []
    for l in lines[1:]:
        f = l.split()
        d = dict(kv.split('=') for kv in f[2:] if '=' in kv)
        ev.append([start + int(f[0]), int(d.get('dur', 0)), f[1], l])
    ranks.append((lines[0], start, ev))
# Rank 0's rows: shape of each kick, boundary = end of its last call of the row.
ev0 = ranks[0][2]
rows = []
for i, e in enumerate(ev0):
    if e[2] == 'kick':
        x = dict(kv.split('=') for kv in ev0[i+1][3].split()[2:])
        shape = f"{x['path']}.{x['skind']}>{x['dkind']}.{int(x['width'])*int(x['count'])}"
        if not rows or rows[-1][0] != shape:
            rows.append([shape, e[0], None])
    if rows and e[2] in ('kick', 'drain', 'wait'):
        rows[-1][2] = e[0] + e[1]
# A row ends with rank 0's last call in it, or later where the other rank's last kick or drain
# of that shape ends later.
ev1 = ranks[1][2]
k = -1
shape1 = None
for i, e in enumerate(ev1):
    if e[2] == 'kick':
        x = dict(kv.split('=') for kv in ev1[i+1][3].split()[2:])
        shape = f"{x['path']}.{x['skind']}>{x['dkind']}.{int(x['width'])*int(x['count'])}"
        if shape != shape1:
            k += 1
            shape1 = shape
            assert rows[k][0] == shape
    if k >= 0 and e[2] in ('kick', 'drain'):
        rows[k][2] = max(rows[k][2], e[0] + e[1])
bounds = [0] + [r[2] for r in rows[:-1]] + [10**30]
windows = [(bounds[k], bounds[k+1], rows[k][0]) for k in range(len(rows))]
kept = [w for w in windows if w[2] in keep]
assert len(kept) == len(keep), (keep, [w[2] for w in windows])
straddle = 0
for hdr, start, ev in ranks:
    for e in ev:
        for a, b, name in windows:
            if a <= e[0] < b and e[0] + e[1] > b and b < 10**29:
                straddle += 1
print('events crossing a row boundary:', straddle, file=sys.stderr)
import os
os.makedirs(dst, exist_ok=True)
# New absolute time: kept windows back to back, starting where the first kept one starts.
for r, (hdr, start, ev) in enumerate(ranks):
    out = [hdr]
    last = 0
    for e in ev:
        if e[2] == 'end':
            continue
        # An event belongs to the row its end falls in (a wait begun in one row for the next
        # row's first transfer belongs to the next); its start is clipped to that row's.
        offset = None
        removed = 0
        end = e[0] + e[1]
        for a, b, name in windows:
            if a < end <= b or (end == e[0] and a <= end < b):
                offset = removed if name in keep else None
                begin = max(e[0], a)
                break
            if name not in keep:
                removed += min(b, 10**29) - a
        if offset is None:
            continue
        t = begin - offset - start
        f = e[3].split(' ', 1)[1]
        if begin != e[0]:
            f = f.replace(f'dur={e[1]}', f'dur={end - begin}')
        out.append(f'{t} {f}')
        last = max(last, t + end - begin)
    out.append(f'{last} end')
    open(f'{dst}/rank-{r}.trace', 'w').write('\n'.join(out) + '\n')
