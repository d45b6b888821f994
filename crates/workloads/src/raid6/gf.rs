//! GF(2^8) arithmetic of Linux lib/raid6: field polynomial x^8+x^4+x^3+x^2+1 (0x11d), generator
//! g = 2 ({02}). Tables are built at compile time by shift-and-xor ("Russian peasant")
//! multiplication, so they share no code with the log/exp tables of [`super::reference`].

/// The field polynomial, 0x11d (H. Peter Anvin, "The mathematics of RAID-6", section 2).
pub const POLY: u16 = 0x11d;

/// Product of `a` and `b` in GF(2^8) by shift-and-xor.
pub const fn mul(a: u8, b: u8) -> u8 {
    let mut x = a as u16;
    let mut y = b;
    let mut acc: u16 = 0;
    while y != 0 {
        if y & 1 != 0 {
            acc ^= x;
        }
        x <<= 1;
        if x & 0x100 != 0 {
            x ^= POLY;
        }
        y >>= 1;
    }
    acc as u8
}

const fn build_mul() -> [[u8; 256]; 256] {
    let mut t = [[0u8; 256]; 256];
    let mut a = 0;
    while a < 256 {
        let mut b = 0;
        while b < 256 {
            t[a][b] = mul(a as u8, b as u8);
            b += 1;
        }
        a += 1;
    }
    t
}

/// `MUL[a][b]` = a·b (64 KiB table, as the kernel's `raid6_gfmul`).
pub static MUL: [[u8; 256]; 256] = build_mul();

/// g^n for n = 0..255 by repeated multiplication by 2 (g^255 = 1).
pub const fn pow2(n: usize) -> u8 {
    let mut v: u8 = 1;
    let mut i = 0;
    while i < n % 255 {
        v = mul(v, 2);
        i += 1;
    }
    v
}

/// Multiplicative inverse of a non-zero `a` (a^254); `inv(0)` is 0 and never used.
pub const fn inv(a: u8) -> u8 {
    // a^254 by square-and-multiply.
    let mut result: u8 = 1;
    let mut base = a;
    let mut e = 254u32;
    while e != 0 {
        if e & 1 != 0 {
            result = mul(result, base);
        }
        base = mul(base, base);
        e >>= 1;
    }
    result
}

/// Multiplies every byte of `buf` by the constant `c`, in place.
pub fn mul_slice_in_place(c: u8, buf: &mut [u8]) {
    let row = &MUL[c as usize];
    for b in buf.iter_mut() {
        *b = row[*b as usize];
    }
}

/// The 8x8 bit matrix of "multiply by `c`" in the layout of the x86 GFNI instruction
/// GF2P8AFFINEQB: output bit i of `affine(x)` is the parity of `x AND byte[7 - i]` of the
/// returned word, and row i has bit j set when bit i of c·2^j is set. Multiplication by a
/// constant is GF(2)-linear, so this works for the RAID-6 field (0x11d), which GF2P8MULB
/// (fixed to the AES polynomial 0x11b) does not serve.
pub const fn affine_matrix(c: u8) -> u64 {
    let mut m = 0u64;
    let mut i = 0;
    while i < 8 {
        let mut row = 0u8;
        let mut j = 0;
        while j < 8 {
            if (mul(c, 1 << j) >> i) & 1 != 0 {
                row |= 1 << j;
            }
            j += 1;
        }
        m |= (row as u64) << (8 * (7 - i));
        i += 1;
    }
    m
}

/// The product `c·x` for the low-nibble values x = 0..16 (`[0]`) and the high-nibble values
/// x = 0x00, 0x10, .., 0xf0 (`[1]`): a byte times c is the XOR of both lookups, the form
/// the byte-shuffle instructions (PSHUFB, TBL) use, as the kernel's recov_avx2.c does.
pub const fn nibble_tables(c: u8) -> [[u8; 16]; 2] {
    let mut t = [[0u8; 16]; 2];
    let mut x = 0;
    while x < 16 {
        t[0][x] = mul(c, x as u8);
        t[1][x] = mul(c, (x as u8) << 4);
        x += 1;
    }
    t
}

/// Software model of one byte of GF2P8AFFINEQB with a zero constant (Intel SDM), for the
/// tests of [`affine_matrix`] on every architecture.
pub const fn affine_byte(m: u64, x: u8) -> u8 {
    let mut out = 0u8;
    let mut i = 0;
    while i < 8 {
        let row = (m >> (8 * (7 - i))) as u8;
        if (row & x).count_ones() % 2 == 1 {
            out |= 1 << i;
        }
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generator_has_order_255() {
        // 2 generates the multiplicative group: g^k != 1 for 0 < k < 255, g^255 == 1.
        let mut seen = [false; 256];
        for k in 0..255 {
            let v = pow2(k);
            assert!(!seen[v as usize], "g^{k} = {v:#04x} repeats");
            seen[v as usize] = true;
        }
        assert!(!seen[0]);
        assert_eq!(pow2(255), 1);
        assert_eq!(pow2(8), 0x1d, "x^8 = x^4+x^3+x^2+1 under 0x11d");
    }

    #[test]
    fn inverse_and_distributive() {
        for a in 1..=255u8 {
            assert_eq!(MUL[a as usize][inv(a) as usize], 1, "a = {a}");
        }
        for a in [0u8, 1, 2, 0x53, 0xca, 0xff] {
            for b in [0u8, 1, 3, 0x8e, 0xfe] {
                for c in [0u8, 7, 0x80] {
                    assert_eq!(mul(a, b ^ c), mul(a, b) ^ mul(a, c));
                }
            }
        }
    }

    #[test]
    fn affine_matrix_and_nibble_tables_multiply_by_the_constant() {
        // Every constant and every byte: both encodings give the shift-and-xor product.
        for c in 0..=255u8 {
            let m = affine_matrix(c);
            let t = nibble_tables(c);
            for x in 0..=255u8 {
                let want = mul(c, x);
                assert_eq!(affine_byte(m, x), want, "affine c={c:#04x} x={x:#04x}");
                assert_eq!(
                    t[0][(x & 15) as usize] ^ t[1][(x >> 4) as usize],
                    want,
                    "nibbles c={c:#04x} x={x:#04x}"
                );
            }
        }
        // Multiplying by 1 is the identity matrix: rows 0x01 (bit 0) .. 0x80 (bit 7), bit 0's
        // row in the top byte.
        assert_eq!(affine_matrix(1), 0x0102_0408_1020_4080);
    }
}
