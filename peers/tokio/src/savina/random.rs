//! The seeded generators of Savina's benchmarks on tokio, ported from our kernels' one home of
//! them (native/kernels/savina/random.hpp), so that each draws the numbers ours draw, bit for bit:
//! Savina's 16-bit PseudoRandom, the SplitMix64 streams that stand in for java.util.Random, the
//! synthetic work that stands in for Savina's busy-waits, and the FNV-1a fold answers are hashed by.

/// Savina's PseudoRandom: value = (value * 1309 + 13849) & 65535. A step depends only on the low
/// 16 bits of the value before it, so 64-bit arithmetic gives Java's sequence for any seed.
pub struct PseudoRandom(pub u64);

impl PseudoRandom {
    /// The next value, 0..65535.
    pub fn next_value(&mut self) -> u64 {
        self.0 = (self.0.wrapping_mul(1309).wrapping_add(13849)) & 65535;
        self.0
    }

    /// nextInt(bound), as Savina's: the next value modulo `bound`.
    pub fn next(&mut self, bound: u64) -> u64 {
        self.next_value() % bound
    }

    /// nextDouble(), as Savina's: 1 / (value + 1).
    pub fn next_double(&mut self) -> f64 {
        1.0 / (self.next_value() + 1) as f64
    }
}

/// SplitMix64's finalizer.
pub fn mix64(z: u64) -> u64 {
    let z = (z ^ (z >> 30)).wrapping_mul(0xBF58476D1CE4E5B9);
    let z = (z ^ (z >> 27)).wrapping_mul(0x94D049BB133111EB);
    z ^ (z >> 31)
}

/// SplitMix64, its state started at mix64(seed * 65536 + stream): stream is a worker's index (each
/// its own), 0 for a kernel's one stream.
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64, stream: u32) -> Self {
        SplitMix64(mix64(seed.wrapping_mul(65536).wrapping_add(u64::from(stream))))
    }

    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E3779B97F4A7C15);
        mix64(self.0)
    }
}

/// The synthetic work in place of Savina's busy-waits (`steps` calls of Math.random()): `steps`
/// steps of a 64-bit LCG from `steps`, whose last state the caller keeps, so none is skipped.
/// Each step's state passes through an empty asm statement, which the compiler must take as
/// changing it: without it LLVM unrolls the loop by 8 and folds each 8 steps into one multiply and
/// add (a^8, and the increments summed), doing an eighth of the work; 1,000 calls of 10-1,009
/// steps took 58 us where the same loop from g++, as ours, takes 613 us, and 609 us with the
/// statement (rustc 1.63 and 1.95 alike). The statement emits no instruction.
pub fn busy_work(steps: u32) -> u64 {
    let mut x = u64::from(steps);
    for _ in 0..steps {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        // SAFETY: an empty template reads and writes one register and touches no memory.
        unsafe { std::arch::asm!("/* {0} */", inout(reg) x, options(pure, nomem, nostack)) };
    }
    x
}

/// FNV-1a over 64-bit words: its basis, and one word folded in.
pub const FNV_BASIS: u64 = 0xcbf29ce484222325;

pub fn fnv_fold(hash: u64, word: u64) -> u64 {
    (hash ^ word).wrapping_mul(0x100000001b3)
}
