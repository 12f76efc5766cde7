/**
 * CPU time spent by the processes behind a figure, read from /proc (Linux; elsewhere it reads 0): the api
 * process(es), the database's backends (PostgreSQL: the server processes connected to the bench's own database) and
 * the load generator. The bench prints it per request, so a figure says where its CPU went and not only how fast it
 * was.
 */
import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';

export interface CpuGroups {
  /** Process ids of the api process(es). */
  api: number[];
  /** The load generator's process id. */
  load: number | undefined;
  /** The PostgreSQL database whose backends count (undefined on PGlite, which runs inside the api process). */
  database_name: string | undefined;
}

export interface CpuSpent {
  api_s: number;
  db_s: number;
  load_s: number;
  /** The machine's idle share over the interval, 0-1. */
  idle: number;
}

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

function ticksOf(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]); // utime + stime
  } catch {
    return 0; // gone
  }
}

function backendsOf(database_name: string): number[] {
  const pids: number[] = [];
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return pids; // not Linux: the database's CPU counts as 0
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // a backend's title: "postgres: 15/main: <user> <database> <client> <state>"
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').split(' ').includes(database_name)) pids.push(Number(entry));
    } catch {
      // gone
    }
  }
  return pids;
}

function idleTicks(): { idle: number; total: number } {
  const times = os.cpus().map((cpu) => cpu.times);
  const idle = times.reduce((sum, t) => sum + t.idle, 0);
  const total = times.reduce((sum, t) => sum + t.idle + t.user + t.sys + t.nice + t.irq, 0);
  return { idle, total };
}

/** Starts counting; the returned function stops and answers what each group spent meanwhile. */
export function countCpu(groups: CpuGroups): () => CpuSpent {
  const snapshot = () => {
    const db = new Map<number, number>(
      groups.database_name ? backendsOf(groups.database_name).map((pid) => [pid, ticksOf(pid)]) : [],
    );
    return {
      api: groups.api.reduce((sum, pid) => sum + ticksOf(pid), 0),
      load: groups.load ? ticksOf(groups.load) : 0,
      db,
      machine: idleTicks(),
    };
  };
  const before = snapshot();
  return () => {
    const after = snapshot();
    let db = 0;
    // a backend that started meanwhile counts whole; one that ended meanwhile is lost (pools keep theirs)
    for (const [pid, ticks] of after.db) db += ticks - (before.db.get(pid) ?? 0);
    const total = after.machine.total - before.machine.total;
    return {
      api_s: (after.api - before.api) / TICKS_PER_SECOND,
      db_s: db / TICKS_PER_SECOND,
      load_s: (after.load - before.load) / TICKS_PER_SECOND,
      idle: total > 0 ? (after.machine.idle - before.machine.idle) / total : 0,
    };
  };
}
