/**
 * A readers-writer lock for async tasks: any number of shared holders at a time, or one exclusive
 * holder. Waiters are served in arrival order, so a waiting exclusive task is not overtaken by
 * shared tasks that arrive after it.
 */
export interface ReadWriteLock {
  /** Runs `task` once no exclusive task holds the lock (other shared tasks may run alongside). */
  shared<T>(task: () => Promise<T>): Promise<T>;
  /** Runs `task` once nothing else holds the lock. */
  exclusive<T>(task: () => Promise<T>): Promise<T>;
}

/** A new, free {@link ReadWriteLock}. */
export function createReadWriteLock(): ReadWriteLock {
  let readers = 0;
  let writing = false;
  const waiting: { readonly exclusive: boolean; readonly grant: () => void }[] =
    [];

  const serve = (): void => {
    for (let next = waiting[0]; next !== undefined; next = waiting[0]) {
      if (writing || (next.exclusive && readers > 0)) return;
      waiting.shift();
      if (next.exclusive) writing = true;
      else readers++;
      next.grant();
      if (next.exclusive) return;
    }
  };

  const run = async <T>(
    exclusive: boolean,
    task: () => Promise<T>,
  ): Promise<T> => {
    await new Promise<void>((grant) => {
      waiting.push({ exclusive, grant });
      serve();
    });
    try {
      return await task();
    } finally {
      if (exclusive) writing = false;
      else readers--;
      serve();
    }
  };

  return {
    shared: (task) => run(false, task),
    exclusive: (task) => run(true, task),
  };
}
