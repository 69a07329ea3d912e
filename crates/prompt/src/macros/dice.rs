//! `{{roll::3d6+4}}` / `{{dice::…}}`: dice totals from the macro engine's seeded generator.

use rand::Rng;

/// A parsed dice formula `NdM±K`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dice {
    /// Number of dice (1…1000).
    pub count: u32,
    /// Faces per die (1…1,000,000).
    pub faces: u32,
    /// Constant added to the total.
    pub modifier: i64,
}

impl Dice {
    /// Parses `3d6`, `d20`, `2d10-1`, or bare digits (`6` = `1d6`, as in SillyTavern).
    /// `None` for anything else, so the macro is left as written and reported.
    pub fn parse(formula: &str) -> Option<Self> {
        let text: String = formula.chars().filter(|c| !c.is_whitespace()).collect();
        let text = text.to_ascii_lowercase();
        if text.is_empty() {
            return None;
        }
        if text.bytes().all(|b| b.is_ascii_digit()) {
            let faces = text.parse().ok()?;
            return Self::checked(1, faces, 0);
        }
        let (count, rest) = text.split_once('d')?;
        let count = if count.is_empty() {
            1
        } else {
            count.parse().ok()?
        };
        let split = rest.find(['+', '-']).unwrap_or(rest.len());
        let faces = rest[..split].parse().ok()?;
        let modifier = if split < rest.len() {
            rest[split..].parse::<i64>().ok()?
        } else {
            0
        };
        Self::checked(count, faces, modifier)
    }

    fn checked(count: u32, faces: u32, modifier: i64) -> Option<Self> {
        ((1..=1000).contains(&count) && (1..=1_000_000).contains(&faces)).then_some(Self {
            count,
            faces,
            modifier,
        })
    }

    /// Rolls every die and adds the modifier.
    pub fn roll(&self, rng: &mut impl Rng) -> i64 {
        let sum: i64 = (0..self.count)
            .map(|_| i64::from(rng.random_range(1..=self.faces)))
            .sum();
        sum + self.modifier
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn parses_formulas() {
        let d = |c, f, m| {
            Some(Dice {
                count: c,
                faces: f,
                modifier: m,
            })
        };
        assert_eq!(Dice::parse("3d6"), d(3, 6, 0));
        assert_eq!(Dice::parse("d20"), d(1, 20, 0));
        assert_eq!(Dice::parse("6"), d(1, 6, 0));
        assert_eq!(Dice::parse("2D10 - 1"), d(2, 10, -1));
        assert_eq!(Dice::parse("1d6+4"), d(1, 6, 4));
        for bad in ["", "abc", "0d6", "3d0", "3d", "d6x", "5000d6"] {
            assert_eq!(Dice::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn totals_stay_in_range() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let dice = Dice::parse("3d6+4").unwrap_or_else(|| unreachable!());
        for _ in 0..200 {
            let total = dice.roll(&mut rng);
            assert!((7..=22).contains(&total), "{total}");
        }
    }
}
