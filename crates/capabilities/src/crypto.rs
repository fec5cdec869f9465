//! The `crypto` host interface: RSA key generation, RSA signatures and bcrypt hashes, run
//! natively for a plugin (Sprig's `genPrivateKey`, `genCA`, `genSignedCert`, `htpasswd`, …
//! inside the Helm backends), where they are several times faster than inside WebAssembly
//! (which has no 64×64-bit multiplication and no native tables). The host knows nothing of
//! what a key, signature or hash is for. Keys come from `capstan-rsakey`'s prime search
//! (fixed-width Montgomery arithmetic; 2.0× faster than AWS-LC at 2048 bits when it was
//! measured against it, docs/rendering.md), one search per key and several keys at once
//! ([`KeyReserve`]). Needs no grant: it reads nothing and reaches nothing; sizes are
//! bounded so one call costs at most a few seconds of CPU.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex, MutexGuard};
use std::time::Instant;

use tokio::sync::{mpsc, oneshot};

use super::bindings::crypto::Host;
use super::bindings::types::{Error, ErrorCode};
use super::errors::error;

/// Smallest and largest key sizes a plugin may ask for, or sign with.
const KEY_BITS: std::ops::RangeInclusive<u32> = 1024..=4096;

/// bcrypt costs a plugin may ask for: each step doubles the work, which runs out of reach
/// of the call's deadline (cost 12 is about 0.25 s; Sprig uses 10).
const BCRYPT_COSTS: std::ops::RangeInclusive<u32> = 4..=12;

/// The key sizes generated ahead.
const RESERVED_SIZES: [u32; 3] = [2048, 3072, 4096];

/// A generated key, or why there is none.
type KeyResult = Result<Vec<u8>, String>;

/// Keys generated ahead of the requests, per size. A chart that makes keys usually makes
/// several in a row (Bitnami's harbor eight of 2048 bits, milvus three of 4096), and the
/// component waits for each. Each key is searched for by one thread of its own (a search
/// shared by several threads wastes the candidates the others are testing when one finds
/// the prime), and a request takes whichever key is done first:
/// - while a request waits, `searchers` keys are in flight, one per core: the first done
///   is its key (the quickest of two independent searches, where the shared search took
///   the mean), the others become spares;
/// - once it has its key, `spare_depth` keys stay in flight or ready (one core fewer than
///   the machine has, leaving one to the rendering between the chart's key requests).
///
/// Each key is fresh and handed out once; the few spare keys of a size stay in memory until
/// asked for (threads are detached: a command that exits does not wait for them).
pub struct KeyReserve {
    spare_depth: usize,
    searchers: usize,
    sizes: Mutex<HashMap<u32, Arc<SizeReserve>>>,
}

/// The keys of one size: those in flight or ready, and where they arrive.
struct SizeReserve {
    /// Keys in flight or ready and not yet taken.
    pending: Mutex<usize>,
    /// Where the generating threads send their keys.
    sender: mpsc::UnboundedSender<KeyResult>,
    /// Ready keys; the requests of a size take them in turn.
    ready: tokio::sync::Mutex<mpsc::UnboundedReceiver<KeyResult>>,
}

/// The process's reserve: one search per core while a request waits, one spare per size
/// for every core but one otherwise.
static RESERVE: LazyLock<KeyReserve> = LazyLock::new(|| {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let spare_depth = cores.saturating_sub(1).clamp(1, 3);
    KeyReserve::new(spare_depth, cores.clamp(spare_depth, 4))
});

impl KeyReserve {
    /// A reserve keeping `spare_depth` keys of each size asked for in flight or ready, and
    /// `searchers` (at least `spare_depth`) in flight while a request waits.
    pub fn new(spare_depth: usize, searchers: usize) -> Self {
        KeyReserve {
            spare_depth,
            searchers: searchers.max(spare_depth).max(1),
            sizes: Mutex::new(HashMap::new()),
        }
    }

    /// A key of `bits` bits: a ready spare, else the first of the searches in flight to
    /// finish. Spares are kept only for the sizes charts use (2048, 3072, 4096 bits), so
    /// that no plugin can make the host keep keys of every size.
    pub async fn key(&self, bits: u32) -> KeyResult {
        if !RESERVED_SIZES.contains(&bits) {
            return fresh_key(bits).await;
        }
        let size = self.size(bits);
        let mut ready = size.ready.lock().await;
        let key = match ready.try_recv() {
            Ok(key) => key,
            Err(_) => {
                size.top_up(bits, self.searchers);
                // `size` holds a sender, so the channel stays open: `None` cannot come.
                ready
                    .recv()
                    .await
                    .unwrap_or_else(|| Err("the key reserve closed".into()))
            }
        };
        drop(ready);
        size.taken();
        size.top_up(bits, self.spare_depth);
        key
    }

    /// Keys of `bits` bits in flight or ready.
    pub fn spares(&self, bits: u32) -> usize {
        self.lock_sizes()
            .get(&bits)
            .map_or(0, |size| *size.lock_pending())
    }

    /// The reserve of `bits`-bit keys, made on first use.
    fn size(&self, bits: u32) -> Arc<SizeReserve> {
        self.lock_sizes()
            .entry(bits)
            .or_insert_with(|| {
                let (sender, receiver) = mpsc::unbounded_channel();
                Arc::new(SizeReserve {
                    pending: Mutex::new(0),
                    sender,
                    ready: tokio::sync::Mutex::new(receiver),
                })
            })
            .clone()
    }

    /// The reserves by size (a panic elsewhere while holding them leaves them usable).
    fn lock_sizes(&self) -> MutexGuard<'_, HashMap<u32, Arc<SizeReserve>>> {
        self.sizes.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl SizeReserve {
    /// Start searches until `target` keys are in flight or ready.
    fn top_up(&self, bits: u32, target: usize) {
        let mut pending = self.lock_pending();
        while *pending < target {
            *pending += 1;
            let sender = self.sender.clone();
            let started = std::thread::Builder::new()
                .name("capstan-rsa-key".into())
                .spawn(move || {
                    let _ =
                        sender.send(capstan_rsakey::generate_der_with_threads(bits as usize, 1));
                });
            if let Err(e) = started {
                // Counted as pending: answer it, so that a request waiting for it ends.
                let _ = self
                    .sender
                    .send(Err(format!("cannot start a key generation thread: {e}")));
                break;
            }
        }
    }

    /// One key fewer pending.
    fn taken(&self) {
        let mut pending = self.lock_pending();
        *pending = pending.saturating_sub(1);
    }

    fn lock_pending(&self) -> MutexGuard<'_, usize> {
        self.pending.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A key of `bits` bits generated now, every core searching for each prime, on a thread of
/// its own.
async fn fresh_key(bits: u32) -> KeyResult {
    let (sender, receiver) = oneshot::channel();
    // If the thread cannot start, `sender` is dropped and the receiver says so.
    let _ = std::thread::Builder::new()
        .name("capstan-rsa-key".into())
        .spawn(move || {
            let _ = sender.send(capstan_rsakey::generate_der(bits as usize));
        });
    receiver
        .await
        .unwrap_or_else(|_| Err("the key generation thread ended without a key".into()))
}

/// What the `crypto` import sees of a call: the plugin's name and the hashes it started.
pub struct CryptoView<'a> {
    /// The plugin's name.
    pub(crate) plugin: &'a str,
    /// Hashes started by `bcrypt-hash-start` and not finished yet.
    pub(crate) hashes: &'a mut RunningHashes,
}

impl Host for CryptoView<'_> {
    async fn generate_rsa_key(&mut self, bits: u32) -> Result<Vec<u8>, Error> {
        if !KEY_BITS.contains(&bits) || !bits.is_multiple_of(2) {
            return Err(error(
                ErrorCode::InvalidInput,
                format!(
                    "generate-rsa-key: {bits} bits is not an even size from {} to {}",
                    KEY_BITS.start(),
                    KEY_BITS.end()
                ),
            ));
        }
        let started = Instant::now();
        let generated = RESERVE
            .key(bits)
            .await
            .map_err(|e| error(ErrorCode::Internal, format!("generate-rsa-key: {e}")))?;
        tracing::debug!(
            target: "capstan::plugin",
            plugin = self.plugin,
            bits,
            elapsed_ms = started.elapsed().as_millis() as u64,
            "generated an RSA key"
        );
        Ok(generated)
    }

    async fn sign_rsa_sha256(&mut self, key: Vec<u8>, message: Vec<u8>) -> Result<Vec<u8>, Error> {
        let sizes = *KEY_BITS.start() as usize..=*KEY_BITS.end() as usize;
        off_the_executor("sign-rsa-sha256", move || {
            capstan_rsakey::sign_sha256_der(&key, &message, sizes)
        })
        .await
        .map_err(|e| error(ErrorCode::InvalidInput, format!("sign-rsa-sha256: {e}")))
    }

    async fn bcrypt_hash(&mut self, password: String, cost: u32) -> Result<String, Error> {
        check_bcrypt_cost("bcrypt-hash", cost)?;
        off_the_executor("bcrypt-hash", move || bcrypt_text(password, cost))
            .await
            .map_err(|e| error(ErrorCode::InvalidInput, e))
    }

    async fn bcrypt_hash_start(&mut self, password: String, cost: u32) -> Result<u64, Error> {
        check_bcrypt_cost("bcrypt-hash-start", cost)?;
        let hashes = &mut *self.hashes;
        if hashes.running.len() >= MAX_RUNNING_HASHES {
            return Err(error(
                ErrorCode::InvalidInput,
                format!(
                    "bcrypt-hash-start: {MAX_RUNNING_HASHES} hashes are already running in this call"
                ),
            ));
        }
        hashes.next += 1;
        let handle = hashes.next;
        let task = tokio::task::spawn_blocking(move || bcrypt_text(password, cost));
        hashes.running.insert(handle, task);
        Ok(handle)
    }

    async fn bcrypt_hash_finish(&mut self, handle: u64) -> Result<String, Error> {
        let Some(task) = self.hashes.running.remove(&handle) else {
            return Err(error(
                ErrorCode::NotFound,
                format!("bcrypt-hash-finish: no running hash {handle}"),
            ));
        };
        task.await
            .unwrap_or_else(|e| Err(format!("bcrypt-hash did not finish: {e}")))
            .map_err(|e| error(ErrorCode::InvalidInput, e))
    }
}

/// Most hashes one call may have running at once (`bcrypt-hash-start`): each holds a core
/// for up to a quarter of a second.
const MAX_RUNNING_HASHES: usize = 4;

/// The hashes a call started and has not finished (`bcrypt-hash-start`). Dropped with the
/// call: a hash still running then ends on its own and its result is thrown away.
#[derive(Default)]
pub struct RunningHashes {
    next: u64,
    running: HashMap<u64, tokio::task::JoinHandle<Result<String, String>>>,
}

fn check_bcrypt_cost(function: &str, cost: u32) -> Result<(), Error> {
    if BCRYPT_COSTS.contains(&cost) {
        return Ok(());
    }
    Err(error(
        ErrorCode::InvalidInput,
        format!(
            "{function}: cost {cost} is not from {} to {}",
            BCRYPT_COSTS.start(),
            BCRYPT_COSTS.end()
        ),
    ))
}

/// golang.org/x/crypto/bcrypt's text of a hash of `password` at `cost`, fresh salt.
fn bcrypt_text(password: String, cost: u32) -> Result<String, String> {
    bcrypt::hash_with_result(password, cost)
        .map(|hash| hash.format_for_version(bcrypt::Version::TwoA))
        .map_err(|e| e.to_string())
}

/// Run `work` (milliseconds of CPU) on the blocking pool, so that it holds no executor
/// thread other calls need.
async fn off_the_executor<T: Send + 'static>(
    what: &str,
    work: impl FnOnce() -> Result<T, String> + Send + 'static,
) -> Result<T, String> {
    tokio::task::spawn_blocking(work)
        .await
        .unwrap_or_else(|e| Err(format!("{what} did not finish: {e}")))
}

#[cfg(test)]
mod tests {
    use rsa::pkcs1::DecodeRsaPrivateKey;
    use rsa::traits::PublicKeyParts;

    /// Each request starts the next key of its size, and never hands out a key twice.
    #[tokio::test]
    async fn the_reserve_starts_the_next_key_and_hands_each_out_once() {
        let reserve = super::KeyReserve::new(1, 2);
        assert_eq!(reserve.spares(2048), 0);
        let first = reserve.key(2048).await.unwrap();
        assert_eq!(reserve.spares(2048), 1, "no spare started");
        assert_eq!(
            reserve.spares(4096),
            0,
            "a spare of a size nobody asked for"
        );
        let second = reserve.key(2048).await.unwrap();
        assert_eq!(reserve.spares(2048), 1);
        assert_ne!(first, second, "a key was handed out twice");
        let odd_size = reserve.key(1024).await.unwrap();
        assert_eq!(
            reserve.spares(1024),
            0,
            "a spare of a size charts do not use"
        );
        for (der, bits) in [(first, 2048), (second, 2048), (odd_size, 1024)] {
            let key = rsa::RsaPrivateKey::from_pkcs1_der(&der).unwrap();
            key.validate().unwrap();
            assert_eq!(key.size() * 8, bits);
        }
    }

    #[test]
    fn generates_valid_pkcs1_keys_of_the_size_asked() {
        // PKCS#1 keys the `rsa` crate parses and validates, of the size asked for.
        for bits in [1024, 2048] {
            let der = capstan_rsakey::generate_der(bits).unwrap();
            let key = rsa::RsaPrivateKey::from_pkcs1_der(&der).unwrap();
            key.validate().unwrap();
            assert_eq!(key.size() * 8, bits);
            assert_eq!(key.e(), &rsa::BigUint::from(65537u32));
        }
    }
}
