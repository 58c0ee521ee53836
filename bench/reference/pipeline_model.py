#!/usr/bin/env python3
"""A plain Python event model of one 1F1B pipeline step, by the same rules as stepsim's engine.

It is the yardstick for issue 16's "whole process vs a Python model" figure: scripts/bench.sh
and bench/reference/side_by_side.sh run it and `stepsim run --json` on the same case, alternating,
and check that both give the same step time, bubble fraction and peak memory before comparing
their CPU time.

The case is bench/suites/pipeline-base.yaml at p stages and m micro-batches: forward 10 ms,
backward 20 ms, update 1 ms per device, 1 ms link latency (no bandwidth: a message occupies its
link for 0 ns), 230 MiB of activations per resident micro-batch, 1 MiB messages.

Rules (sim/engine.hpp, schedules/lowering/pipeline/pipeline.hpp):
  * an op is ready when every dependency is done (ended plus its latency);
  * a device's compute stream runs its actions in program order (1F1B: p-s-1 warm-up forwards,
    then one forward / one backward, then the remaining backwards; the optimizer update last);
  * a message between stages is an op on the directed link, served first come first served
    (earliest ready time, then lower op id), arriving `latency` after it ends;
  * all events of one time are applied before any resource is offered work;
  * memory: activations held from F's start to B's end; a message from its arrival until the
    op that consumes it starts; at equal times releases come before acquisitions.

Usage: pipeline_model.py STAGES MICROBATCHES   (prints a JSON object)
"""
import heapq
import json
import sys

MS = 1_000_000
FORWARD, BACKWARD, UPDATE, LATENCY = 10 * MS, 20 * MS, 1 * MS, 1 * MS
ACTIVATION, MESSAGE = 230 * 1024 * 1024, 1024 * 1024


def one_f_one_b(p, m):
    """Per device, its actions in order: ('F' | 'B', stage, micro-batch)."""
    lists = []
    for s in range(p):
        acts, fwd, bwd = [], 0, 0
        warmup = min(p - s - 1, m)
        while fwd < warmup:
            acts.append(("F", s, fwd)); fwd += 1
        while fwd < m:
            acts.append(("F", s, fwd)); fwd += 1
            acts.append(("B", s, bwd)); bwd += 1
        while bwd < m:
            acts.append(("B", s, bwd)); bwd += 1
        lists.append(acts)
    return lists


def simulate(p, m):
    # Ops: resource, duration, latency, successors, pending count.
    res, dur, lat, succ = [], [], [], []

    def add(r, d, l=0):
        res.append(r); dur.append(d); lat.append(l); succ.append([])
        return len(res) - 1

    pending = []
    compute = list(range(p))               # resources 0..p-1: compute streams (program order)
    link = {}                              # (src, dst) -> resource id (FIFO)
    nres = [p]
    order = [[] for _ in range(p)]         # program order per compute stream
    fwd, bwd = {}, {}
    for d, acts in enumerate(one_f_one_b(p, m)):
        for kind, s, i in acts:
            op = add(d, FORWARD if kind == "F" else BACKWARD)
            order[d].append(op)
            (fwd if kind == "F" else bwd)[(s, i)] = op
        order[d].append(add(d, UPDATE))
    deps = []
    holds = []  # (device, amount, (op, 'start'|'end'|'done'), (op, point))

    def message(frm, to, src, dst):
        r = link.get((src, dst))
        if r is None:
            r = link[(src, dst)] = nres[0]; nres[0] += 1
        send = add(r, 0, LATENCY)
        deps.append((frm, send)); deps.append((send, to))
        holds.append((dst, MESSAGE, (send, "done"), (to, "start")))

    for i in range(m):
        for s in range(p):
            f, b = fwd[(s, i)], bwd[(s, i)]
            if s > 0:
                message(fwd[(s - 1, i)], f, s - 1, s)
            if s + 1 < p:
                message(bwd[(s + 1, i)], b, s + 1, s)
            deps.append((f, b))
            holds.append((s, ACTIVATION, (f, "start"), (b, "end")))

    n = len(res)
    pending = [0] * n
    for a, b in deps:
        succ[a].append(b); pending[b] += 1
    nr = nres[0]
    fifo_res = [r >= p for r in range(nr)]
    cursor = [0] * nr                      # index into order[r] for compute streams
    fifo = [[] for _ in range(nr)]
    busy = [False] * nr
    start, end = [-1] * n, [-1] * n
    events = []                            # (time, kind, op): kind 0 = end, 1 = done
    makespan = 0

    def ready(op, now):
        r = res[op]
        if fifo_res[r]:
            heapq.heappush(fifo[r], (now, op))

    def offer(now):
        for r in range(nr):
            if busy[r]:
                continue
            if fifo_res[r]:
                if not fifo[r]:
                    continue
                _, op = heapq.heappop(fifo[r])
            else:
                if cursor[r] >= len(order[r]):
                    continue
                op = order[r][cursor[r]]
                if pending[op]:
                    continue
            busy[r] = True
            start[op] = now
            end[op] = now + dur[op]
            heapq.heappush(events, (end[op], 0, op))

    def done(op, now):
        nonlocal makespan
        makespan = max(makespan, now)
        for s in succ[op]:
            pending[s] -= 1
            if pending[s] == 0:
                ready(s, now)

    for op in range(n):
        if pending[op] == 0:
            ready(op, 0)
    offer(0)
    while events:
        now = events[0][0]
        while events and events[0][0] == now:
            _, kind, op = heapq.heappop(events)
            if kind == 1:
                done(op, now)
                continue
            r = res[op]
            busy[r] = False
            if not fifo_res[r]:
                cursor[r] += 1
            if lat[op] == 0:
                done(op, now)
            else:
                heapq.heappush(events, (now + lat[op], 1, op))
        offer(now)

    def at(mark):
        op, point = mark
        return start[op] if point == "start" else end[op] if point == "end" else end[op] + lat[op]

    peaks = []
    busy_time = [0] * p
    for op in range(n):
        if res[op] < p:
            busy_time[res[op]] += dur[op]
    changes = [[] for _ in range(p)]
    for dev, amount, frm, until in holds:
        changes[dev].append((at(frm), amount))
        changes[dev].append((at(until), -amount))
    for dev in range(p):
        level = peak = 0
        ch = sorted(changes[dev], key=lambda c: c[0])
        k = 0
        while k < len(ch):
            t = ch[k][0]
            while k < len(ch) and ch[k][0] == t:
                level += ch[k][1]; k += 1
            peak = max(peak, level)
        peaks.append(peak)
    bubble = sum((makespan - b) / makespan for b in busy_time) / p
    return {
        "ops": n,
        "step_time_ms": round(makespan / MS, 3),
        "bubble_fraction": round(bubble, 4),
        "peak_memory_mib": round(max(peaks) / (1024 * 1024), 3),
    }


if __name__ == "__main__":
    print(json.dumps(simulate(int(sys.argv[1]), int(sys.argv[2]))))
