//! The [`Store`](crate::Store) shorthands: each runs one [`Tx`](crate::Tx) operation in its own
//! transaction, so a caller that needs a single operation does not have to open one.

/// Generates `Store` methods that forward to the `Tx` method of the same name, inside a
/// `read` or `write` transaction.
macro_rules! store_shorthands {
    ($( $(#[$meta:meta])* $mode:ident fn $name:ident(&self $(, $arg:ident : $ty:ty)* $(,)?) -> $ret:ty; )*) => {
        impl $crate::Store {
            $(
                $(#[$meta])*
                #[doc = concat!("\n\nShorthand for [`Tx::", stringify!($name), "`](crate::Tx::", stringify!($name), ") in its own transaction.")]
                pub fn $name(&self $(, $arg: $ty)*) -> $crate::Result<$ret> {
                    self.$mode(|tx| tx.$name($($arg),*))
                }
            )*
        }
    };
}

pub(crate) use store_shorthands;
