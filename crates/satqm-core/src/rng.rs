//! Named, seeded random streams.
//!
//! Every random component draws from its own stream, derived from the
//! master seed, the component's name and an index, so adding a flow does not
//! change the numbers any other component sees. Streams are
//! xoshiro256++ generators seeded through SplitMix64 from a stable FNV-1a
//! hash of the name: the same (seed, name, index) gives the same stream on
//! every platform and every satqm build.

use rand::{Rng as _, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// A random stream.
#[derive(Clone, Debug)]
pub struct Rng(Xoshiro256PlusPlus);

fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= *b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl Rng {
    /// The stream for component `name`, instance `index`, under `seed`.
    pub fn stream(seed: u64, name: &str, index: u64) -> Rng {
        let k = splitmix64(seed ^ splitmix64(fnv1a(name.as_bytes()) ^ splitmix64(index)));
        Rng(Xoshiro256PlusPlus::seed_from_u64(k))
    }

    /// Uniform in [0, 1).
    pub fn uniform(&mut self) -> f64 {
        self.0.gen::<f64>()
    }

    /// Uniform in [a, b].
    pub fn uniform_range(&mut self, a: f64, b: f64) -> f64 {
        a + (b - a) * self.uniform()
    }

    /// Uniform integer in [a, b] (inclusive).
    pub fn uniform_u64(&mut self, a: u64, b: u64) -> u64 {
        if a >= b {
            return a;
        }
        self.0.gen_range(a..=b)
    }

    /// Bernoulli trial with success probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        p > 0.0 && self.uniform() < p
    }

    /// Exponential with the given mean.
    pub fn exponential(&mut self, mean: f64) -> f64 {
        // 1 - U is in (0, 1], so the logarithm is finite.
        -mean * (1.0 - self.uniform()).ln()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_reproducible_and_independent() {
        let a: Vec<f64> = (0..4)
            .map(|_| Rng::stream(7, "flow", 1).uniform())
            .collect();
        assert!(a.windows(2).all(|w| w[0] == w[1]));
        let mut x = Rng::stream(7, "flow", 1);
        let mut y = Rng::stream(7, "flow", 2);
        let mut z = Rng::stream(8, "flow", 1);
        let mut w = Rng::stream(7, "link", 1);
        let v = x.uniform();
        assert_ne!(v, y.uniform());
        assert_ne!(v, z.uniform());
        assert_ne!(v, w.uniform());
    }

    #[test]
    fn uniform_range_bounds() {
        let mut r = Rng::stream(1, "t", 0);
        for _ in 0..10_000 {
            let v = r.uniform_range(0.3, 0.4);
            assert!((0.3..=0.4).contains(&v));
        }
    }
}
