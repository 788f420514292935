//! Running the three parties of one computation in this process, one thread each.

use triskele_engine::EngineError;
use triskele_net::Network;

use crate::error::CliError;

/// Builds a rayon pool of `threads` workers (0 = all cores).
pub fn pool(threads: usize) -> Result<rayon::ThreadPool, CliError> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| CliError::Input(format!("cannot start {threads} worker threads: {e}")))
}

/// Runs `f` for each party on its own thread and worker pool, and returns the three results
/// (P1, P2, P3). If a party fails, returns the most telling error: a security abort first,
/// then the first error that is not a consequence of another party having stopped.
pub fn run_three<T: Send>(
    nets: [Network; 3],
    threads: usize,
    f: impl Fn(Network) -> Result<T, EngineError> + Sync,
) -> Result<[T; 3], CliError> {
    run_three_in(&pools(threads)?, nets, f)
}

/// One worker pool per party, each of `threads` workers (0 = all cores).
pub fn pools(threads: usize) -> Result<[rayon::ThreadPool; 3], CliError> {
    Ok([pool(threads)?, pool(threads)?, pool(threads)?])
}

/// [`run_three`] on worker pools the caller keeps: `pools[p]` runs party `p + 1`. A local
/// benchmark keeps its three pools from one repetition to the next, as a party in a process
/// of its own keeps its pool (`bench --config`): the workers' allocator heaps then serve the
/// next repetition with memory the last one freed, instead of fresh pages the kernel has to
/// fault in and zero (docs/PERFORMANCE.md, "Worker pools kept from run to run").
pub fn run_three_in<T: Send>(
    pools: &[rayon::ThreadPool; 3],
    nets: [Network; 3],
    f: impl Fn(Network) -> Result<T, EngineError> + Sync,
) -> Result<[T; 3], CliError> {
    let f = &f;
    let results: Vec<Result<T, CliError>> = std::thread::scope(|s| {
        let handles: Vec<_> = nets
            .into_iter()
            .zip(pools)
            .map(|(net, pool)| {
                s.spawn(move || -> Result<T, CliError> {
                    pool.install(|| f(net)).map_err(CliError::from)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(CliError::Party("a party thread panicked".into())))
            })
            .collect()
    });
    let mut oks = Vec::with_capacity(3);
    let mut errs = Vec::new();
    for r in results {
        match r {
            Ok(v) => oks.push(v),
            Err(e) => errs.push(e),
        }
    }
    if errs.is_empty() {
        if let Ok(arr) = <[T; 3]>::try_from(oks) {
            return Ok(arr);
        }
        return Err(CliError::Party("a party returned no result".into()));
    }
    errs.sort_by_key(|e| match e {
        CliError::Engine(EngineError::Abort(_)) => 0,
        CliError::Engine(EngineError::Net(n)) if n.is_disconnect() || n.is_timeout() => 2,
        _ => 1,
    });
    Err(errs.swap_remove(0))
}
