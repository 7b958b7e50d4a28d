//! `OFPMP_TABLE_FEATURES`: `ofp_table_features` and its properties (§7.3.5.5).
//!
//! A TABLE_FEATURES request either is empty (a query) or carries a list of
//! [`TableFeatures`] to set; the reply carries the list the switch has. Each entry holds
//! a list of [`TableFeatureProp`] properties, each padded to 8 bytes with a length that
//! excludes the padding.

use serde::{Deserialize, Serialize};

use crate::error::{DecodeError, DecodeResult, EncodeError, EncodeResult};
use crate::of13::entries::entry;
use crate::of13::oxm::{OxmHeader, OXM_CLASS_EXPERIMENTER};
use crate::open_enum;
use crate::types::FixedStr;
use crate::wire::{padding_for, LenMark, Put, Reader};

open_enum! {
    /// `ofp_table_feature_prop_type`.
    pub enum TableFeaturePropType: u16 {
        Instructions = 0 => "INSTRUCTIONS",
        InstructionsMiss = 1 => "INSTRUCTIONS_MISS",
        NextTables = 2 => "NEXT_TABLES",
        NextTablesMiss = 3 => "NEXT_TABLES_MISS",
        WriteActions = 4 => "WRITE_ACTIONS",
        WriteActionsMiss = 5 => "WRITE_ACTIONS_MISS",
        ApplyActions = 6 => "APPLY_ACTIONS",
        ApplyActionsMiss = 7 => "APPLY_ACTIONS_MISS",
        Match = 8 => "MATCH",
        Wildcards = 10 => "WILDCARDS",
        WriteSetfield = 12 => "WRITE_SETFIELD",
        WriteSetfieldMiss = 13 => "WRITE_SETFIELD_MISS",
        ApplySetfield = 14 => "APPLY_SETFIELD",
        ApplySetfieldMiss = 15 => "APPLY_SETFIELD_MISS",
        Experimenter = 0xfffe => "EXPERIMENTER",
        ExperimenterMiss = 0xffff => "EXPERIMENTER_MISS",
    }
}

/// The instruction or action type `OFPIT_EXPERIMENTER` / `OFPAT_EXPERIMENTER`.
pub const ID_TYPE_EXPERIMENTER: u16 = 0xffff;

/// One entry of `ofp_table_features` (§7.3.5.5.1): a table's name, metadata bits,
/// size and capabilities.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TableFeatures {
    pub table_id: u8,
    pub name: FixedStr<32>,
    /// Bits of metadata the table can match.
    pub metadata_match: u64,
    /// Bits of metadata the table can write.
    pub metadata_write: u64,
    /// `OFPTC_*` bitmap.
    pub config: u32,
    /// Maximum number of entries supported.
    pub max_entries: u32,
    pub properties: Vec<TableFeatureProp>,
}

impl TableFeatures {
    /// Bytes before the property list.
    pub const FIXED_LEN: usize = 64;

    /// Parses one entry (its length field first) from `r`.
    pub fn parse(r: &mut Reader<'_>) -> DecodeResult<TableFeatures> {
        // §7.3.5.5.1, ofp_table_features: "uint16_t length; /* Length is padded to 64
        // bits. */"; the properties fill the entry after its 64-byte fixed part.
        let mut e = entry(r, "ofp_table_features", 0, Self::FIXED_LEN)?;
        e.skip(2)?;
        let table_id = e.u8()?;
        e.skip(5)?;
        let t = TableFeatures {
            table_id,
            name: FixedStr(e.array()?),
            metadata_match: e.u64()?,
            metadata_write: e.u64()?,
            config: e.u32()?,
            max_entries: e.u32()?,
            properties: TableFeatureProp::parse_list(&mut e)?,
        };
        Ok(t)
    }

    /// Parses a list of entries filling `r`.
    pub fn parse_list(r: &mut Reader<'_>) -> DecodeResult<Vec<TableFeatures>> {
        let mut v = Vec::new();
        while !r.is_empty() {
            v.push(TableFeatures::parse(r)?);
        }
        Ok(v)
    }

    /// Appends the structure to `out`.
    pub fn emit(&self, out: &mut Vec<u8>) -> EncodeResult<()> {
        let start = out.len();
        let len = LenMark::new(out, start, "ofp_table_features");
        out.put_u8(self.table_id);
        out.put_zeros(5);
        out.put_slice(&self.name.0);
        out.put_u64(self.metadata_match);
        out.put_u64(self.metadata_write);
        out.put_u32(self.config);
        out.put_u32(self.max_entries);
        for p in &self.properties {
            p.emit(out)?;
        }
        len.finish(out)?;
        Ok(())
    }

    /// Describes each part carried opaquely.
    pub fn opaque_parts(&self, out: &mut Vec<String>) {
        for p in &self.properties {
            p.opaque_parts(self.table_id, out);
        }
    }
}

/// An instruction or action id in a table-feature property: `ofp_instruction` /
/// `ofp_action_header` without a body.
///
/// §7.3.5.5.2: "The elements of that list are variable size to enable expressing
/// experimenter instructions, non-experimenter instructions are 4 bytes" (and likewise
/// for actions).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "id", rename_all = "snake_case")]
pub enum FeatureId {
    /// A standard type: 4 bytes on the wire.
    Standard {
        #[serde(rename = "type")]
        id_type: u16,
    },
    /// Type `0xffff`: the experimenter id and any bytes after it.
    Experimenter {
        experimenter: u32,
        #[serde(with = "crate::types::hex", default)]
        data: Vec<u8>,
    },
    /// Any other shape (a standard type followed by bytes, or an experimenter id cut
    /// short), kept as received: the bytes after the 4-byte type/length header.
    Raw {
        #[serde(rename = "type")]
        id_type: u16,
        #[serde(with = "crate::types::hex")]
        body: Vec<u8>,
    },
}

impl FeatureId {
    /// The instruction or action type.
    pub fn id_type(&self) -> u16 {
        match self {
            FeatureId::Standard { id_type } | FeatureId::Raw { id_type, .. } => *id_type,
            FeatureId::Experimenter { .. } => ID_TYPE_EXPERIMENTER,
        }
    }

    /// The value of its length field.
    pub fn wire_len(&self) -> usize {
        match self {
            FeatureId::Standard { .. } => 4,
            FeatureId::Experimenter { data, .. } => 8 + data.len(),
            FeatureId::Raw { body, .. } => 4 + body.len(),
        }
    }

    fn parse_list(r: &mut Reader<'_>, layer: &'static str) -> DecodeResult<Vec<FeatureId>> {
        let mut ids = Vec::new();
        while !r.is_empty() {
            let mut t = r.tlv(layer, 4, 1, false)?;
            ids.push(
                if t.kind == ID_TYPE_EXPERIMENTER && t.body.remaining() >= 4 {
                    FeatureId::Experimenter {
                        experimenter: t.body.u32()?,
                        data: t.body.rest().to_vec(),
                    }
                } else if t.body.is_empty() {
                    FeatureId::Standard { id_type: t.kind }
                } else {
                    FeatureId::Raw {
                        id_type: t.kind,
                        body: t.body.rest().to_vec(),
                    }
                },
            );
        }
        Ok(ids)
    }

    fn emit(&self, out: &mut Vec<u8>, layer: &'static str) -> EncodeResult<()> {
        let start = out.len();
        out.put_u16(self.id_type());
        let len = LenMark::new(out, start, layer);
        match self {
            FeatureId::Standard { .. } => {}
            FeatureId::Experimenter { experimenter, data } => {
                out.put_u32(*experimenter);
                out.put_slice(data);
            }
            FeatureId::Raw { id_type, body } => {
                // A Raw experimenter id must stay shorter than an experimenter id, or it
                // would decode as one.
                // A Raw id must not look like another kind, or it would decode as it.
                if body.is_empty() || (*id_type == ID_TYPE_EXPERIMENTER && body.len() >= 4) {
                    return Err(EncodeError::BadValue {
                        layer,
                        field: "body",
                        value: body.len() as u64,
                        reason: "a raw id has a body, under 4 bytes for type 0xffff",
                    });
                }
                out.put_slice(body);
            }
        }
        len.finish(out)?;
        Ok(())
    }
}

/// An OXM id in a table-feature property: an OXM header without a payload, followed
/// by the experimenter id for the experimenter class.
///
/// §7.3.5.5.2: "The elements of that list are 32-bit OXM headers or 64-bit OXM headers
/// for experimenter OXM fields."
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct OxmId {
    pub header: OxmHeader,
    /// Present exactly when the header's class is `OFPXMC_EXPERIMENTER` (0xffff).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experimenter: Option<u32>,
}

impl OxmId {
    /// The id of a field with no experimenter id.
    pub fn new(header: OxmHeader) -> OxmId {
        OxmId {
            header,
            experimenter: None,
        }
    }

    fn parse_list(r: &mut Reader<'_>) -> DecodeResult<Vec<OxmId>> {
        let mut ids = Vec::new();
        while !r.is_empty() {
            let header = OxmHeader(r.u32()?);
            let experimenter = if header.class() == OXM_CLASS_EXPERIMENTER {
                Some(r.u32()?)
            } else {
                None
            };
            ids.push(OxmId {
                header,
                experimenter,
            });
        }
        Ok(ids)
    }

    fn emit(&self, out: &mut Vec<u8>) -> EncodeResult<()> {
        let experimental = self.header.class() == OXM_CLASS_EXPERIMENTER;
        if experimental != self.experimenter.is_some() {
            return Err(EncodeError::BadValue {
                layer: "ofp_table_feature_prop_oxm",
                field: "experimenter",
                value: self.header.0 as u64,
                reason: "an OXM id carries an experimenter id exactly when its class is 0xffff",
            });
        }
        out.put_u32(self.header.0);
        if let Some(e) = self.experimenter {
            out.put_u32(e);
        }
        Ok(())
    }
}

/// One `ofp_table_feature_prop_*` property (§7.3.5.5.2).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "property", rename_all = "snake_case")]
pub enum TableFeatureProp {
    /// `OFPTFPT_INSTRUCTIONS`: instructions supported by the table.
    Instructions { ids: Vec<FeatureId> },
    /// `OFPTFPT_INSTRUCTIONS_MISS`: the same, for the table-miss flow entry.
    InstructionsMiss { ids: Vec<FeatureId> },
    /// `OFPTFPT_NEXT_TABLES`: tables reachable by goto-table.
    NextTables { table_ids: Vec<u8> },
    /// `OFPTFPT_NEXT_TABLES_MISS`.
    NextTablesMiss { table_ids: Vec<u8> },
    /// `OFPTFPT_WRITE_ACTIONS`: actions usable in write-actions.
    WriteActions { ids: Vec<FeatureId> },
    /// `OFPTFPT_WRITE_ACTIONS_MISS`.
    WriteActionsMiss { ids: Vec<FeatureId> },
    /// `OFPTFPT_APPLY_ACTIONS`: actions usable in apply-actions.
    ApplyActions { ids: Vec<FeatureId> },
    /// `OFPTFPT_APPLY_ACTIONS_MISS`.
    ApplyActionsMiss { ids: Vec<FeatureId> },
    /// `OFPTFPT_MATCH`: fields the table can match.
    Match { oxm_ids: Vec<OxmId> },
    /// `OFPTFPT_WILDCARDS`: fields the table can wildcard.
    Wildcards { oxm_ids: Vec<OxmId> },
    /// `OFPTFPT_WRITE_SETFIELD`: fields usable in write-actions set-field.
    WriteSetfield { oxm_ids: Vec<OxmId> },
    /// `OFPTFPT_WRITE_SETFIELD_MISS`.
    WriteSetfieldMiss { oxm_ids: Vec<OxmId> },
    /// `OFPTFPT_APPLY_SETFIELD`: fields usable in apply-actions set-field.
    ApplySetfield { oxm_ids: Vec<OxmId> },
    /// `OFPTFPT_APPLY_SETFIELD_MISS`.
    ApplySetfieldMiss { oxm_ids: Vec<OxmId> },
    /// `OFPTFPT_EXPERIMENTER`: body opaque.
    Experimenter {
        experimenter: u32,
        exp_type: u32,
        #[serde(with = "crate::types::hex", default)]
        data: Vec<u8>,
    },
    /// `OFPTFPT_EXPERIMENTER_MISS`: body opaque.
    ExperimenterMiss {
        experimenter: u32,
        exp_type: u32,
        #[serde(with = "crate::types::hex", default)]
        data: Vec<u8>,
    },
    /// A property type this codec does not know (or an experimenter property too
    /// short for its ids), kept as received: the bytes after the 4-byte header.
    Unknown {
        prop_type: u16,
        #[serde(with = "crate::types::hex")]
        body: Vec<u8>,
    },
}

impl TableFeatureProp {
    /// The property's type.
    pub fn prop_type(&self) -> TableFeaturePropType {
        use TableFeaturePropType as T;
        match self {
            TableFeatureProp::Instructions { .. } => T::Instructions,
            TableFeatureProp::InstructionsMiss { .. } => T::InstructionsMiss,
            TableFeatureProp::NextTables { .. } => T::NextTables,
            TableFeatureProp::NextTablesMiss { .. } => T::NextTablesMiss,
            TableFeatureProp::WriteActions { .. } => T::WriteActions,
            TableFeatureProp::WriteActionsMiss { .. } => T::WriteActionsMiss,
            TableFeatureProp::ApplyActions { .. } => T::ApplyActions,
            TableFeatureProp::ApplyActionsMiss { .. } => T::ApplyActionsMiss,
            TableFeatureProp::Match { .. } => T::Match,
            TableFeatureProp::Wildcards { .. } => T::Wildcards,
            TableFeatureProp::WriteSetfield { .. } => T::WriteSetfield,
            TableFeatureProp::WriteSetfieldMiss { .. } => T::WriteSetfieldMiss,
            TableFeatureProp::ApplySetfield { .. } => T::ApplySetfield,
            TableFeatureProp::ApplySetfieldMiss { .. } => T::ApplySetfieldMiss,
            TableFeatureProp::Experimenter { .. } => T::Experimenter,
            TableFeatureProp::ExperimenterMiss { .. } => T::ExperimenterMiss,
            TableFeatureProp::Unknown { prop_type, .. } => T::from_raw(*prop_type),
        }
    }

    /// Parses the property list filling `r` (the rest of an `ofp_table_features`).
    pub fn parse_list(r: &mut Reader<'_>) -> DecodeResult<Vec<TableFeatureProp>> {
        let mut props = Vec::new();
        while !r.is_empty() {
            // §7.3.5.5.2: "length ... Length in bytes of this property, excluding
            // padding"; each property is padded to a multiple of 8. `Reader::tlv`
            // tolerates a missing pad after the last element; we do not, because the
            // entry could then not be re-encoded to the same length.
            let offset = r.offset();
            let len = r.peek_u16(2).map_err(|_| r.truncated(4))? as usize;
            let padded = len + padding_for(len);
            if len >= 4 && len <= r.remaining() && padded > r.remaining() {
                return Err(DecodeError::LengthOverrun {
                    layer: "ofp_table_feature_prop padding",
                    offset,
                    length: padded,
                    available: r.remaining(),
                });
            }
            let t = r.tlv("ofp_table_feature_prop", 4, 1, true)?;
            props.push(TableFeatureProp::parse_body(t.kind, t.body)?);
        }
        Ok(props)
    }

    fn parse_body(kind: u16, mut b: Reader<'_>) -> DecodeResult<TableFeatureProp> {
        use TableFeaturePropType as T;
        // Every arm reads to the end of the property or fails.
        let prop = match T::from_raw(kind) {
            T::Instructions => TableFeatureProp::Instructions {
                ids: FeatureId::parse_list(&mut b, "ofp_instruction_id")?,
            },
            T::InstructionsMiss => TableFeatureProp::InstructionsMiss {
                ids: FeatureId::parse_list(&mut b, "ofp_instruction_id")?,
            },
            T::NextTables => TableFeatureProp::NextTables {
                table_ids: b.rest().to_vec(),
            },
            T::NextTablesMiss => TableFeatureProp::NextTablesMiss {
                table_ids: b.rest().to_vec(),
            },
            T::WriteActions => TableFeatureProp::WriteActions {
                ids: FeatureId::parse_list(&mut b, "ofp_action_id")?,
            },
            T::WriteActionsMiss => TableFeatureProp::WriteActionsMiss {
                ids: FeatureId::parse_list(&mut b, "ofp_action_id")?,
            },
            T::ApplyActions => TableFeatureProp::ApplyActions {
                ids: FeatureId::parse_list(&mut b, "ofp_action_id")?,
            },
            T::ApplyActionsMiss => TableFeatureProp::ApplyActionsMiss {
                ids: FeatureId::parse_list(&mut b, "ofp_action_id")?,
            },
            T::Match => TableFeatureProp::Match {
                oxm_ids: OxmId::parse_list(&mut b)?,
            },
            T::Wildcards => TableFeatureProp::Wildcards {
                oxm_ids: OxmId::parse_list(&mut b)?,
            },
            T::WriteSetfield => TableFeatureProp::WriteSetfield {
                oxm_ids: OxmId::parse_list(&mut b)?,
            },
            T::WriteSetfieldMiss => TableFeatureProp::WriteSetfieldMiss {
                oxm_ids: OxmId::parse_list(&mut b)?,
            },
            T::ApplySetfield => TableFeatureProp::ApplySetfield {
                oxm_ids: OxmId::parse_list(&mut b)?,
            },
            T::ApplySetfieldMiss => TableFeatureProp::ApplySetfieldMiss {
                oxm_ids: OxmId::parse_list(&mut b)?,
            },
            T::Experimenter | T::ExperimenterMiss if b.remaining() >= 8 => {
                let experimenter = b.u32()?;
                let exp_type = b.u32()?;
                let data = b.rest().to_vec();
                if kind == T::Experimenter.to_raw() {
                    TableFeatureProp::Experimenter {
                        experimenter,
                        exp_type,
                        data,
                    }
                } else {
                    TableFeatureProp::ExperimenterMiss {
                        experimenter,
                        exp_type,
                        data,
                    }
                }
            }
            _ => TableFeatureProp::Unknown {
                prop_type: kind,
                body: b.rest().to_vec(),
            },
        };
        Ok(prop)
    }

    /// Appends the property and its padding to a multiple of 8.
    pub fn emit(&self, out: &mut Vec<u8>) -> EncodeResult<()> {
        let start = out.len();
        out.put_u16(self.prop_type().to_raw());
        let len = LenMark::new(out, start, "ofp_table_feature_prop");
        match self {
            TableFeatureProp::Instructions { ids } | TableFeatureProp::InstructionsMiss { ids } => {
                for id in ids {
                    id.emit(out, "ofp_instruction_id")?;
                }
            }
            TableFeatureProp::WriteActions { ids }
            | TableFeatureProp::WriteActionsMiss { ids }
            | TableFeatureProp::ApplyActions { ids }
            | TableFeatureProp::ApplyActionsMiss { ids } => {
                for id in ids {
                    id.emit(out, "ofp_action_id")?;
                }
            }
            TableFeatureProp::NextTables { table_ids }
            | TableFeatureProp::NextTablesMiss { table_ids } => out.put_slice(table_ids),
            TableFeatureProp::Match { oxm_ids }
            | TableFeatureProp::Wildcards { oxm_ids }
            | TableFeatureProp::WriteSetfield { oxm_ids }
            | TableFeatureProp::WriteSetfieldMiss { oxm_ids }
            | TableFeatureProp::ApplySetfield { oxm_ids }
            | TableFeatureProp::ApplySetfieldMiss { oxm_ids } => {
                for id in oxm_ids {
                    id.emit(out)?;
                }
            }
            TableFeatureProp::Experimenter {
                experimenter,
                exp_type,
                data,
            }
            | TableFeatureProp::ExperimenterMiss {
                experimenter,
                exp_type,
                data,
            } => {
                out.put_u32(*experimenter);
                out.put_u32(*exp_type);
                out.put_slice(data);
            }
            TableFeatureProp::Unknown { prop_type, body } => {
                // An Unknown property of a known type would decode as that type.
                let t = TableFeaturePropType::from_raw(*prop_type);
                let experimenter = matches!(
                    t,
                    TableFeaturePropType::Experimenter | TableFeaturePropType::ExperimenterMiss
                );
                if t.name().is_some() && !(experimenter && body.len() < 8) {
                    return Err(EncodeError::BadValue {
                        layer: "ofp_table_feature_prop",
                        field: "prop_type",
                        value: *prop_type as u64,
                        reason: "an unknown property must not have a known type",
                    });
                }
                out.put_slice(body);
            }
        }
        let end = out.len();
        len.finish_with(out, end)?;
        crate::wire::pad_to(out, start);
        Ok(())
    }

    /// Describes each part carried opaquely, for table `table_id`.
    pub fn opaque_parts(&self, table_id: u8, out: &mut Vec<String>) {
        match self {
            TableFeatureProp::Experimenter {
                experimenter,
                exp_type,
                data,
            }
            | TableFeatureProp::ExperimenterMiss {
                experimenter,
                exp_type,
                data,
            } => out.push(format!(
                "table {table_id} experimenter feature property {experimenter:#x}/{exp_type} ({} bytes)",
                data.len()
            )),
            TableFeatureProp::Unknown { prop_type, body } => out.push(format!(
                "table {table_id} unknown feature property {prop_type} ({} bytes)",
                body.len()
            )),
            _ => {}
        }
    }
}
