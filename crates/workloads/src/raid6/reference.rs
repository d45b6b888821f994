//! Independent, deliberately slow bytewise RAID-6 reference.
//!
//! It shares no code or tables with the fast paths: the field is built at run time as log/exp
//! tables (walking powers of x modulo 0x11d), Q is computed as the plain sum Σ g^i·D_i (no Horner
//! scheme) and recovery solves the 2x2 system by field division through the log table. Used only
//! to check the fast paths (tests, `verify_against_reference`).

/// GF(2^8) as log/exp tables over the polynomial 0x11d with generator 2.
pub struct LogExpField {
    /// exp[i] = 2^i for i in 0..510 (doubled so sums of two logs need no reduction).
    exp: [u8; 510],
    /// log[x] for x in 1..=255; log[0] is unused.
    log: [usize; 256],
}

impl Default for LogExpField {
    fn default() -> Self {
        Self::new()
    }
}

impl LogExpField {
    /// Builds the tables.
    pub fn new() -> Self {
        let mut exp = [0u8; 510];
        let mut log = [0usize; 256];
        let mut x: u32 = 1;
        for i in 0..255 {
            exp[i] = x as u8;
            exp[i + 255] = x as u8;
            log[x as usize] = i;
            x <<= 1;
            if x > 0xff {
                x ^= 0x11d;
            }
        }
        Self { exp, log }
    }

    /// a·b.
    pub fn mul(&self, a: u8, b: u8) -> u8 {
        if a == 0 || b == 0 {
            0
        } else {
            self.exp[self.log[a as usize] + self.log[b as usize]]
        }
    }

    /// a / b for b != 0 (returns 0 for b == 0, never used by the callers).
    pub fn div(&self, a: u8, b: u8) -> u8 {
        if a == 0 || b == 0 {
            0
        } else {
            self.exp[self.log[a as usize] + 255 - self.log[b as usize]]
        }
    }

    /// 2^i.
    pub fn gen_pow(&self, i: usize) -> u8 {
        self.exp[i % 255]
    }
}

/// P and Q of `data` (all blocks of one length), byte by byte: P = ⊕ D_i, Q = ⊕ g^i·D_i.
pub fn syndromes(data: &[&[u8]]) -> (Vec<u8>, Vec<u8>) {
    let f = LogExpField::new();
    let len = data.first().map_or(0, |d| d.len());
    let mut p = vec![0u8; len];
    let mut q = vec![0u8; len];
    for (k, (pk, qk)) in p.iter_mut().zip(q.iter_mut()).enumerate() {
        for (i, d) in data.iter().enumerate() {
            *pk ^= d[k];
            *qk ^= f.mul(f.gen_pow(i), d[k]);
        }
    }
    (p, q)
}

/// Recovers data blocks `a` < `b` (both lost; their contents in `data` are ignored) from the
/// other data blocks and P, Q. Returns (D_a, D_b).
pub fn recover_two_data(
    data: &[&[u8]],
    p: &[u8],
    q: &[u8],
    a: usize,
    b: usize,
) -> (Vec<u8>, Vec<u8>) {
    let f = LogExpField::new();
    let (ga, gb) = (f.gen_pow(a), f.gen_pow(b));
    let mut da = vec![0u8; p.len()];
    let mut db = vec![0u8; p.len()];
    for k in 0..p.len() {
        // A + B = P', ga·A + gb·B = Q' with the surviving blocks folded out.
        let mut ps = p[k];
        let mut qs = q[k];
        for (i, d) in data.iter().enumerate() {
            if i != a && i != b {
                ps ^= d[k];
                qs ^= f.mul(f.gen_pow(i), d[k]);
            }
        }
        let bb = f.div(qs ^ f.mul(ga, ps), ga ^ gb);
        db[k] = bb;
        da[k] = ps ^ bb;
    }
    (da, db)
}
