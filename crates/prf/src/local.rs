//! Running the three parties of one computation in this process (tests, `triskele prf`).

use triskele_net::Network;

/// Runs `f` once per party, each on its own thread with its own network end, and returns the
/// three results in party order (P1, P2, P3). A party that panics is reported as a panic of
/// the caller (that is a bug, not an input error).
pub fn three<T: Send>(nets: [Network; 3], f: impl Fn(Network) -> T + Sync) -> [T; 3] {
    std::thread::scope(|s| {
        let handles = nets.map(|net| {
            let f = &f;
            s.spawn(move || f(net))
        });
        handles.map(|h| match h.join() {
            Ok(v) => v,
            Err(e) => std::panic::resume_unwind(e),
        })
    })
}
