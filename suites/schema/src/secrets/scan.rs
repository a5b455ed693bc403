//! Whether any string of a value that serializes holds a secret, without writing the value
//! out: a serde `Serializer` that visits every string (values, map keys, field and variant
//! names) and stops at the first that contains a needle. `Redactor::redact_serde` asks this
//! first and builds the value's JSON only when the answer is yes, so reading many runs that
//! hold no secret (a series of 10,000 runs read for a page) costs a walk, not a JSON text per
//! run. Numbers are not looked at: redaction only ever replaces text within strings.

use memchr::memmem;
use serde::Serialize;
use serde::ser;

/// Why the walk stopped: a string held a needle (or the value failed to serialize, which the
/// caller treats the same way: it then takes the slow path, which reports the error).
#[derive(Debug)]
pub(super) struct Stop;

impl std::fmt::Display for Stop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a needle was found")
    }
}

impl std::error::Error for Stop {}

impl ser::Error for Stop {
    fn custom<T: std::fmt::Display>(_: T) -> Self {
        Stop
    }
}

/// The forms of the secrets a redactor knows, made ready to search for: one searcher per
/// form, built once (not once per string looked at), and the shortest form's length, below
/// which a text cannot hold any (most field names, numbers as text, short names).
#[derive(Clone, Default)]
pub(super) struct Needles {
    finders: Vec<memmem::Finder<'static>>,
    shortest: usize,
}

impl Needles {
    pub(super) fn new(forms: &[String]) -> Self {
        Needles {
            finders: forms
                .iter()
                .map(|f| memmem::Finder::new(f.as_bytes()).into_owned())
                .collect(),
            shortest: forms.iter().map(String::len).min().unwrap_or(usize::MAX),
        }
    }

    /// Whether `text` holds one of the forms.
    pub(super) fn in_text(&self, text: &str) -> bool {
        text.len() >= self.shortest
            && self
                .finders
                .iter()
                .any(|f| f.find(text.as_bytes()).is_some())
    }
}

/// Whether some string of `value` contains one of `needles` (or it does not serialize).
pub(super) fn holds_any<T: Serialize + ?Sized>(value: &T, needles: &Needles) -> bool {
    value.serialize(Scan { needles }).is_err()
}

#[derive(Clone, Copy)]
struct Scan<'a> {
    needles: &'a Needles,
}

impl Scan<'_> {
    fn text(self, s: &str) -> Result<(), Stop> {
        if self.needles.in_text(s) {
            Err(Stop)
        } else {
            Ok(())
        }
    }
}

macro_rules! ignore {
    ($($name:ident: $ty:ty),*) => {
        $(fn $name(self, _: $ty) -> Result<(), Stop> { Ok(()) })*
    };
}

impl<'a> ser::Serializer for Scan<'a> {
    type Ok = ();
    type Error = Stop;
    type SerializeSeq = Self;
    type SerializeTuple = Self;
    type SerializeTupleStruct = Self;
    type SerializeTupleVariant = Self;
    type SerializeMap = Self;
    type SerializeStruct = Self;
    type SerializeStructVariant = Self;

    ignore!(
        serialize_bool: bool, serialize_i8: i8, serialize_i16: i16, serialize_i32: i32,
        serialize_i64: i64, serialize_i128: i128, serialize_u8: u8, serialize_u16: u16,
        serialize_u32: u32, serialize_u64: u64, serialize_u128: u128, serialize_f32: f32,
        serialize_f64: f64
    );

    fn serialize_char(self, v: char) -> Result<(), Stop> {
        self.text(v.encode_utf8(&mut [0u8; 4]))
    }

    fn serialize_str(self, v: &str) -> Result<(), Stop> {
        self.text(v)
    }

    fn serialize_bytes(self, v: &[u8]) -> Result<(), Stop> {
        self.text(&String::from_utf8_lossy(v))
    }

    fn serialize_none(self) -> Result<(), Stop> {
        Ok(())
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), Stop> {
        value.serialize(self)
    }

    fn serialize_unit(self) -> Result<(), Stop> {
        Ok(())
    }

    fn serialize_unit_struct(self, _: &'static str) -> Result<(), Stop> {
        Ok(())
    }

    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
    ) -> Result<(), Stop> {
        self.text(variant)
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<(), Stop> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<(), Stop> {
        self.text(variant)?;
        value.serialize(self)
    }

    fn serialize_seq(self, _: Option<usize>) -> Result<Self, Stop> {
        Ok(self)
    }

    fn serialize_tuple(self, _: usize) -> Result<Self, Stop> {
        Ok(self)
    }

    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Self, Stop> {
        Ok(self)
    }

    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Self, Stop> {
        self.text(variant)?;
        Ok(self)
    }

    fn serialize_map(self, _: Option<usize>) -> Result<Self, Stop> {
        Ok(self)
    }

    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self, Stop> {
        Ok(self)
    }

    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Self, Stop> {
        self.text(variant)?;
        Ok(self)
    }
}

/// The compound parts of a value: each element, field or entry is walked in turn; a field's
/// name is looked at too, as a JSON text holds it.
macro_rules! compound {
    ($trait:ident, $method:ident) => {
        impl ser::$trait for Scan<'_> {
            type Ok = ();
            type Error = Stop;
            fn $method<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Stop> {
                value.serialize(*self)
            }
            fn end(self) -> Result<(), Stop> {
                Ok(())
            }
        }
    };
    ($trait:ident, named $method:ident) => {
        impl ser::$trait for Scan<'_> {
            type Ok = ();
            type Error = Stop;
            fn $method<T: Serialize + ?Sized>(
                &mut self,
                key: &'static str,
                value: &T,
            ) -> Result<(), Stop> {
                self.text(key)?;
                value.serialize(*self)
            }
            fn end(self) -> Result<(), Stop> {
                Ok(())
            }
        }
    };
}

compound!(SerializeSeq, serialize_element);
compound!(SerializeTuple, serialize_element);
compound!(SerializeTupleStruct, serialize_field);
compound!(SerializeTupleVariant, serialize_field);
compound!(SerializeStruct, named serialize_field);
compound!(SerializeStructVariant, named serialize_field);

impl ser::SerializeMap for Scan<'_> {
    type Ok = ();
    type Error = Stop;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Stop> {
        key.serialize(*self)
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Stop> {
        value.serialize(*self)
    }
    fn end(self) -> Result<(), Stop> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[derive(Serialize)]
    enum Kind {
        Plain,
        Tagged(String),
        Shaped { inner: Vec<String> },
    }

    #[derive(Serialize)]
    struct Doc {
        name: String,
        n: u64,
        x: f64,
        maybe: Option<String>,
        map: BTreeMap<String, u32>,
        kinds: Vec<Kind>,
    }

    fn doc() -> Doc {
        Doc {
            name: "gemm".into(),
            n: 7,
            x: 1.5,
            maybe: None,
            map: BTreeMap::new(),
            kinds: vec![Kind::Plain],
        }
    }

    /// A needle is found wherever a string holds it: a field, an option, a map key, inside an
    /// enum, and not in numbers; without any needle nothing is found.
    #[test]
    fn every_string_is_looked_at_and_nothing_else() {
        let needles = Needles::new(&["s3cr3t-value".to_string()]);
        assert!(!holds_any(&doc(), &needles));
        assert!(!holds_any(&doc(), &Needles::new(&[])));
        let mut d = doc();
        d.name = "x s3cr3t-value y".into();
        assert!(holds_any(&d, &needles));
        let mut d = doc();
        d.maybe = Some("s3cr3t-value".into());
        assert!(holds_any(&d, &needles));
        let mut d = doc();
        d.map.insert("k-s3cr3t-value".into(), 1);
        assert!(holds_any(&d, &needles));
        let mut d = doc();
        d.kinds.push(Kind::Tagged("s3cr3t-value".into()));
        assert!(holds_any(&d, &needles));
        let mut d = doc();
        d.kinds.push(Kind::Shaped {
            inner: vec!["a".into(), "s3cr3t-value".into()],
        });
        assert!(holds_any(&d, &needles));
        let mut d = doc();
        d.n = 12_345_678_901;
        assert!(
            !holds_any(&d, &Needles::new(&["12345678901".to_string()])),
            "numbers are not text"
        );
    }
}
