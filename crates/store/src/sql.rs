//! The store's SQL, written once for both databases: parameters, rows and the dialect.
//!
//! Repositories write SQLite-flavoured SQL with numbered parameters (`?1`, `?2`, …) and pass
//! their values as [`params!`]; [`Row::get`] reads a column as `i64`, `String`, `Vec<u8>`,
//! `bool`, `f64` or an `Option` of one. The few statements the two databases spell differently
//! (JSON functions, string slicing) ask [`crate::Tx::dialect`] and write both spellings beside
//! each other. PostgreSQL gets the same text with `$1`, `$2`, … (see [`numbered_for_postgres`]).

use crate::error::{Result, StoreError};

/// Which database a transaction runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// The embedded default.
    Sqlite,
    /// `tavo serve --database postgres://…`.
    Postgres,
}

/// One parameter value, borrowed from the caller.
#[derive(Debug, Clone, Copy)]
#[doc(hidden)]
pub enum SqlValue<'a> {
    Null,
    Int(i64),
    Real(f64),
    Text(&'a str),
    Blob(&'a [u8]),
}

/// What can be bound to a parameter.
pub trait Param {
    /// The value as the statement binds it.
    fn value(&self) -> SqlValue<'_>;
}

impl Param for i64 {
    fn value(&self) -> SqlValue<'_> {
        SqlValue::Int(*self)
    }
}
impl Param for i32 {
    fn value(&self) -> SqlValue<'_> {
        SqlValue::Int(i64::from(*self))
    }
}
impl Param for u32 {
    fn value(&self) -> SqlValue<'_> {
        SqlValue::Int(i64::from(*self))
    }
}
impl Param for usize {
    fn value(&self) -> SqlValue<'_> {
        SqlValue::Int(i64::try_from(*self).unwrap_or(i64::MAX))
    }
}
impl Param for u64 {
    fn value(&self) -> SqlValue<'_> {
        SqlValue::Int(i64::try_from(*self).unwrap_or(i64::MAX))
    }
}
impl Param for bool {
    fn value(&self) -> SqlValue<'_> {
        SqlValue::Int(i64::from(*self))
    }
}
impl Param for f64 {
    fn value(&self) -> SqlValue<'_> {
        SqlValue::Real(*self)
    }
}
impl Param for str {
    fn value(&self) -> SqlValue<'_> {
        SqlValue::Text(self)
    }
}
impl Param for String {
    fn value(&self) -> SqlValue<'_> {
        SqlValue::Text(self)
    }
}
impl Param for [u8] {
    fn value(&self) -> SqlValue<'_> {
        SqlValue::Blob(self)
    }
}
impl Param for Vec<u8> {
    fn value(&self) -> SqlValue<'_> {
        SqlValue::Blob(self)
    }
}
impl<T: Param + ?Sized> Param for &T {
    fn value(&self) -> SqlValue<'_> {
        (**self).value()
    }
}
impl<T: Param> Param for Option<T> {
    fn value(&self) -> SqlValue<'_> {
        match self {
            Some(v) => v.value(),
            None => SqlValue::Null,
        }
    }
}

/// `params![a, b, …]`: the values of a statement's `?1`, `?2`, ….
#[macro_export]
macro_rules! params {
    () => {
        &[] as &[&dyn $crate::sql::Param]
    };
    ($($p:expr),+ $(,)?) => {
        &[$(&$p as &dyn $crate::sql::Param),+] as &[&dyn $crate::sql::Param]
    };
}
pub(crate) use crate::params;

/// One result row, from either database.
pub enum Row<'r> {
    /// A row of SQLite.
    Sqlite(&'r rusqlite::Row<'r>),
    /// A row of PostgreSQL.
    Postgres(&'r tokio_postgres::Row),
}

impl Row<'_> {
    /// How many columns the row has.
    pub(crate) fn len(&self) -> usize {
        match self {
            Row::Sqlite(r) => r.as_ref().column_count(),
            Row::Postgres(r) => r.len(),
        }
    }

    /// Every column, whatever its type (copying rows between databases).
    pub(crate) fn cells(&self) -> Result<Vec<Cell>> {
        (0..self.len()).map(|i| self.get::<Cell>(i)).collect()
    }

    /// Column `i` (0-based) as `T`.
    pub fn get<T: Column>(&self, i: usize) -> Result<T> {
        match self {
            Row::Sqlite(r) => T::from_sqlite(r, i),
            Row::Postgres(r) => T::from_postgres(r, i),
        }
    }
}

/// A type a column can be read as.
pub trait Column: Sized {
    /// Column `i` of a SQLite row.
    fn from_sqlite(row: &rusqlite::Row<'_>, i: usize) -> Result<Self>;
    /// Column `i` of a PostgreSQL row.
    fn from_postgres(row: &tokio_postgres::Row, i: usize) -> Result<Self>;
}

fn pg_error(i: usize, e: impl std::fmt::Display) -> StoreError {
    StoreError::Database(format!("column {i}: {e}"))
}

/// Reads column `i` of a PostgreSQL row as an optional `i64`, whatever integer width (or
/// boolean) the database chose for it: `SELECT 1` is an `int4`, `COUNT(*)` an `int8`.
fn pg_int(row: &tokio_postgres::Row, i: usize) -> Result<Option<i64>> {
    use tokio_postgres::types::Type;
    let ty = row
        .columns()
        .get(i)
        .map(|c| c.type_().clone())
        .ok_or_else(|| pg_error(i, "no such column"))?;
    let v = match ty {
        Type::INT8 => row.try_get::<_, Option<i64>>(i),
        Type::INT4 => row.try_get::<_, Option<i32>>(i).map(|v| v.map(i64::from)),
        Type::INT2 => row.try_get::<_, Option<i16>>(i).map(|v| v.map(i64::from)),
        Type::BOOL => row.try_get::<_, Option<bool>>(i).map(|v| v.map(i64::from)),
        // A bare `NULL` in a select list is `text` to PostgreSQL.
        other => {
            return match row.try_get::<_, AnyNull>(i) {
                Ok(AnyNull(true)) => Ok(None),
                _ => Err(pg_error(i, format!("an integer was read from {other}"))),
            };
        }
    };
    v.map_err(|e| pg_error(i, e))
}

/// Whether a PostgreSQL value is NULL, whatever its type.
struct AnyNull(bool);

impl<'a> tokio_postgres::types::FromSql<'a> for AnyNull {
    fn from_sql(
        _: &tokio_postgres::types::Type,
        _: &'a [u8],
    ) -> std::result::Result<Self, Box<dyn std::error::Error + Sync + Send>> {
        Ok(AnyNull(false))
    }

    fn from_sql_null(
        _: &tokio_postgres::types::Type,
    ) -> std::result::Result<Self, Box<dyn std::error::Error + Sync + Send>> {
        Ok(AnyNull(true))
    }

    fn accepts(_: &tokio_postgres::types::Type) -> bool {
        true
    }
}

impl Column for i64 {
    fn from_sqlite(row: &rusqlite::Row<'_>, i: usize) -> Result<Self> {
        Ok(row.get(i)?)
    }
    fn from_postgres(row: &tokio_postgres::Row, i: usize) -> Result<Self> {
        pg_int(row, i)?.ok_or_else(|| pg_error(i, "NULL where an integer was expected"))
    }
}

impl Column for Option<i64> {
    fn from_sqlite(row: &rusqlite::Row<'_>, i: usize) -> Result<Self> {
        Ok(row.get(i)?)
    }
    fn from_postgres(row: &tokio_postgres::Row, i: usize) -> Result<Self> {
        pg_int(row, i)
    }
}

impl Column for u32 {
    fn from_sqlite(row: &rusqlite::Row<'_>, i: usize) -> Result<Self> {
        Ok(row.get(i)?)
    }
    fn from_postgres(row: &tokio_postgres::Row, i: usize) -> Result<Self> {
        let v = i64::from_postgres(row, i)?;
        u32::try_from(v).map_err(|_| pg_error(i, format!("{v} is out of range for u32")))
    }
}

impl Column for bool {
    fn from_sqlite(row: &rusqlite::Row<'_>, i: usize) -> Result<Self> {
        Ok(row.get(i)?)
    }
    fn from_postgres(row: &tokio_postgres::Row, i: usize) -> Result<Self> {
        Ok(i64::from_postgres(row, i)? != 0)
    }
}

/// Text, bytes and floats read the same way from both: the database's own conversion.
macro_rules! same_column {
    ($($t:ty),*) => {$(
        impl Column for $t {
            fn from_sqlite(row: &rusqlite::Row<'_>, i: usize) -> Result<Self> {
                Ok(row.get(i)?)
            }
            fn from_postgres(row: &tokio_postgres::Row, i: usize) -> Result<Self> {
                row.try_get(i).map_err(|e| pg_error(i, e))
            }
        }
    )*};
}
same_column!(
    String,
    Option<String>,
    Vec<u8>,
    Option<Vec<u8>>,
    f64,
    Option<f64>
);

/// A value of any column type, owned (rows copied from one database to the other).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Cell {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
    Blob(Vec<u8>),
}

impl Param for Cell {
    fn value(&self) -> SqlValue<'_> {
        match self {
            Cell::Null => SqlValue::Null,
            Cell::Int(i) => SqlValue::Int(*i),
            Cell::Real(f) => SqlValue::Real(*f),
            Cell::Text(t) => SqlValue::Text(t),
            Cell::Blob(b) => SqlValue::Blob(b),
        }
    }
}

impl Column for Cell {
    fn from_sqlite(row: &rusqlite::Row<'_>, i: usize) -> Result<Self> {
        use rusqlite::types::ValueRef;
        Ok(match row.get_ref(i)? {
            ValueRef::Null => Cell::Null,
            ValueRef::Integer(n) => Cell::Int(n),
            ValueRef::Real(f) => Cell::Real(f),
            ValueRef::Text(t) => Cell::Text(String::from_utf8_lossy(t).into_owned()),
            ValueRef::Blob(b) => Cell::Blob(b.to_vec()),
        })
    }

    fn from_postgres(row: &tokio_postgres::Row, i: usize) -> Result<Self> {
        use tokio_postgres::types::Type;
        let ty = row
            .columns()
            .get(i)
            .map(|c| c.type_().clone())
            .ok_or_else(|| pg_error(i, "no such column"))?;
        let cell = match ty {
            Type::INT8 | Type::INT4 | Type::INT2 | Type::BOOL => pg_int(row, i)?.map(Cell::Int),
            Type::FLOAT8 => row
                .try_get::<_, Option<f64>>(i)
                .map_err(|e| pg_error(i, e))?
                .map(Cell::Real),
            Type::BYTEA => row
                .try_get::<_, Option<Vec<u8>>>(i)
                .map_err(|e| pg_error(i, e))?
                .map(Cell::Blob),
            _ => row
                .try_get::<_, Option<String>>(i)
                .map_err(|e| pg_error(i, e))?
                .map(Cell::Text),
        };
        Ok(cell.unwrap_or(Cell::Null))
    }
}

/// SQLite's numbered parameters (`?1`) as PostgreSQL's (`$1`); a bare `?` takes the next
/// number. Quoted strings and identifiers are left alone.
pub(crate) fn numbered_for_postgres(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len() + 8);
    let mut next = 1u32;
    let mut quote: Option<char> = None;
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        match quote {
            Some(q) => {
                out.push(c);
                if c == q {
                    quote = None;
                }
            }
            None if c == '\'' || c == '"' => {
                quote = Some(c);
                out.push(c);
            }
            None if c == '?' => {
                let mut digits = String::new();
                while let Some(d) = chars.peek().copied().filter(char::is_ascii_digit) {
                    digits.push(d);
                    chars.next();
                }
                out.push('$');
                if digits.is_empty() {
                    out.push_str(&next.to_string());
                    next += 1;
                } else {
                    next = digits.parse::<u32>().map_or(next, |n| n + 1);
                    out.push_str(&digits);
                }
            }
            None => out.push(c),
        }
    }
    out
}

impl rusqlite::ToSql for dyn Param + '_ {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        use rusqlite::types::{ToSqlOutput, ValueRef};
        Ok(ToSqlOutput::Borrowed(match self.value() {
            SqlValue::Null => ValueRef::Null,
            SqlValue::Int(i) => ValueRef::Integer(i),
            SqlValue::Real(f) => ValueRef::Real(f),
            SqlValue::Text(t) => ValueRef::Text(t.as_bytes()),
            SqlValue::Blob(b) => ValueRef::Blob(b),
        }))
    }
}

/// A parameter for PostgreSQL, written in the type the server inferred for its place: an
/// integer bound where the server expects `int4` or `bool` is converted, so the repositories'
/// SQL needs no casts.
#[derive(Debug)]
pub(crate) struct PgParam<'a>(pub SqlValue<'a>);

impl tokio_postgres::types::ToSql for PgParam<'_> {
    fn to_sql(
        &self,
        ty: &tokio_postgres::types::Type,
        out: &mut bytes::BytesMut,
    ) -> std::result::Result<tokio_postgres::types::IsNull, Box<dyn std::error::Error + Sync + Send>>
    {
        use tokio_postgres::types::{IsNull, Type};
        match self.0 {
            SqlValue::Null => Ok(IsNull::Yes),
            SqlValue::Int(i) => match *ty {
                Type::INT8 => i.to_sql(ty, out),
                Type::INT4 => i32::try_from(i)?.to_sql(ty, out),
                Type::INT2 => i16::try_from(i)?.to_sql(ty, out),
                Type::BOOL => (i != 0).to_sql(ty, out),
                Type::FLOAT8 => (i as f64).to_sql(ty, out),
                Type::TEXT | Type::VARCHAR | Type::UNKNOWN => i.to_string().to_sql(ty, out),
                ref other => Err(format!("an integer bound to a {other} parameter").into()),
            },
            SqlValue::Real(f) => match *ty {
                Type::FLOAT8 => f.to_sql(ty, out),
                Type::FLOAT4 => (f as f32).to_sql(ty, out),
                ref other => Err(format!("a float bound to a {other} parameter").into()),
            },
            SqlValue::Text(t) => match *ty {
                Type::BYTEA => t.as_bytes().to_sql(ty, out),
                _ => t.to_sql(ty, out),
            },
            SqlValue::Blob(b) => b.to_sql(ty, out),
        }
    }

    fn accepts(_: &tokio_postgres::types::Type) -> bool {
        true
    }

    tokio_postgres::types::to_sql_checked!();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbered_parameters_become_dollars_outside_quotes() {
        assert_eq!(
            numbered_for_postgres("SELECT a FROM t WHERE b = ?1 AND c = '?2' AND d = ?2"),
            "SELECT a FROM t WHERE b = $1 AND c = '?2' AND d = $2"
        );
        assert_eq!(
            numbered_for_postgres("INSERT INTO t VALUES (?, ?, \"?\")"),
            "INSERT INTO t VALUES ($1, $2, \"?\")"
        );
        assert_eq!(
            numbered_for_postgres("x = ?10 OR y = ?"),
            "x = $10 OR y = $11"
        );
    }
}
