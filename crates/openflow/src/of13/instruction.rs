//! Instructions (§7.2.4): every 1.3 instruction, experimenter and unknown ones opaque.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::error::{DecodeResult, EncodeResult};
use crate::of13::action::Action;
use crate::open_enum;
use crate::types::to_hex;
use crate::wire::{pad_to, LenMark, Put, Reader};

open_enum! {
    /// `ofp_instruction_type`.
    pub enum InstructionType: u16 {
        GotoTable = 1 => "GOTO_TABLE",
        WriteMetadata = 2 => "WRITE_METADATA",
        WriteActions = 3 => "WRITE_ACTIONS",
        ApplyActions = 4 => "APPLY_ACTIONS",
        ClearActions = 5 => "CLEAR_ACTIONS",
        Meter = 6 => "METER",
        Experimenter = 0xffff => "EXPERIMENTER",
    }
}

/// One instruction.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "instruction", rename_all = "snake_case")]
pub enum Instruction {
    /// `OFPIT_GOTO_TABLE`: continue in `table_id`.
    GotoTable { table_id: u8 },
    /// `OFPIT_WRITE_METADATA`: `metadata = (metadata & !mask) | (value & mask)`.
    WriteMetadata { metadata: u64, metadata_mask: u64 },
    /// `OFPIT_WRITE_ACTIONS`: merge into the action set.
    WriteActions { actions: Vec<Action> },
    /// `OFPIT_APPLY_ACTIONS`: apply now, in order.
    ApplyActions { actions: Vec<Action> },
    /// `OFPIT_CLEAR_ACTIONS`: empty the action set.
    ClearActions,
    /// `OFPIT_METER`: send through meter `meter_id`.
    Meter { meter_id: u32 },
    /// `OFPIT_EXPERIMENTER`: the experimenter id and an opaque body.
    Experimenter {
        experimenter: u32,
        #[serde(with = "crate::types::hex")]
        data: Vec<u8>,
    },
    /// An instruction type this codec does not know: the bytes after type and length.
    Unknown {
        instruction_type: u16,
        #[serde(with = "crate::types::hex")]
        body: Vec<u8>,
    },
}

impl Instruction {
    /// The instruction's wire type.
    pub fn instruction_type(&self) -> InstructionType {
        match self {
            Instruction::GotoTable { .. } => InstructionType::GotoTable,
            Instruction::WriteMetadata { .. } => InstructionType::WriteMetadata,
            Instruction::WriteActions { .. } => InstructionType::WriteActions,
            Instruction::ApplyActions { .. } => InstructionType::ApplyActions,
            Instruction::ClearActions => InstructionType::ClearActions,
            Instruction::Meter { .. } => InstructionType::Meter,
            Instruction::Experimenter { .. } => InstructionType::Experimenter,
            Instruction::Unknown {
                instruction_type, ..
            } => InstructionType::from_raw(*instruction_type),
        }
    }

    /// Parses one instruction.
    pub fn parse(r: &mut Reader<'_>) -> DecodeResult<Instruction> {
        // §7.2.4: "len ... Length of this struct in bytes"; every instruction
        // structure is a multiple of 8 bytes ("padded to 64 bits").
        let t = r.tlv("ofp_instruction", 8, 8, false)?;
        let kind = InstructionType::from_raw(t.kind);
        let layer = match kind {
            InstructionType::GotoTable => "ofp_instruction_goto_table",
            InstructionType::WriteMetadata => "ofp_instruction_write_metadata",
            InstructionType::WriteActions
            | InstructionType::ApplyActions
            | InstructionType::ClearActions => "ofp_instruction_actions",
            InstructionType::Meter => "ofp_instruction_meter",
            InstructionType::Experimenter => "ofp_instruction_experimenter",
            InstructionType::Unknown(_) => "ofp_instruction",
        };
        let mut b = t.body.with_layer(layer);
        let i = match kind {
            InstructionType::GotoTable => {
                let table_id = b.u8()?;
                b.skip(3)?;
                Instruction::GotoTable { table_id }
            }
            InstructionType::WriteMetadata => {
                b.skip(4)?;
                Instruction::WriteMetadata {
                    metadata: b.u64()?,
                    metadata_mask: b.u64()?,
                }
            }
            InstructionType::WriteActions | InstructionType::ApplyActions => {
                b.skip(4)?;
                let actions = Action::parse_list(&mut b)?;
                if kind == InstructionType::WriteActions {
                    Instruction::WriteActions { actions }
                } else {
                    Instruction::ApplyActions { actions }
                }
            }
            InstructionType::ClearActions => {
                // §7.2.4: "For the Clear-Actions instruction, the structure does not
                // contain any actions."
                b.skip(4)?;
                Instruction::ClearActions
            }
            InstructionType::Meter => Instruction::Meter { meter_id: b.u32()? },
            InstructionType::Experimenter => Instruction::Experimenter {
                experimenter: b.u32()?,
                data: b.rest().to_vec(),
            },
            InstructionType::Unknown(instruction_type) => Instruction::Unknown {
                instruction_type,
                body: b.rest().to_vec(),
            },
        };
        b.finish_element(t.offset, t.raw.len())?;
        Ok(i)
    }

    /// Parses instructions until `r` is empty.
    pub fn parse_list(r: &mut Reader<'_>) -> DecodeResult<Vec<Instruction>> {
        let mut out = Vec::new();
        while !r.is_empty() {
            out.push(Instruction::parse(r)?);
        }
        Ok(out)
    }

    /// Appends the instruction, its length patched.
    pub fn emit(&self, out: &mut Vec<u8>) -> EncodeResult<()> {
        let start = out.len();
        out.put_u16(self.instruction_type().to_raw());
        let len = LenMark::new(out, start, "ofp_instruction");
        match self {
            Instruction::GotoTable { table_id } => {
                out.put_u8(*table_id);
                out.put_zeros(3);
            }
            Instruction::WriteMetadata {
                metadata,
                metadata_mask,
            } => {
                out.put_zeros(4);
                out.put_u64(*metadata);
                out.put_u64(*metadata_mask);
            }
            Instruction::WriteActions { actions } | Instruction::ApplyActions { actions } => {
                out.put_zeros(4);
                Action::emit_list(actions, out)?;
            }
            Instruction::ClearActions => out.put_zeros(4),
            Instruction::Meter { meter_id } => out.put_u32(*meter_id),
            Instruction::Experimenter { experimenter, data } => {
                out.put_u32(*experimenter);
                out.put_slice(data);
            }
            Instruction::Unknown { body, .. } => out.put_slice(body),
        }
        pad_to(out, start);
        len.finish(out)?;
        Ok(())
    }

    /// Appends every instruction.
    pub fn emit_list(instructions: &[Instruction], out: &mut Vec<u8>) -> EncodeResult<()> {
        instructions.iter().try_for_each(|i| i.emit(out))
    }

    /// Describes each part carried opaquely.
    pub fn opaque_parts(&self, out: &mut Vec<String>) {
        match self {
            Instruction::WriteActions { actions } | Instruction::ApplyActions { actions } => {
                Action::list_opaque_parts(actions, out)
            }
            Instruction::Experimenter { experimenter, .. } => {
                out.push(format!("experimenter instruction 0x{experimenter:08x}"))
            }
            Instruction::Unknown {
                instruction_type, ..
            } => out.push(format!("unknown instruction type {instruction_type}")),
            _ => {}
        }
    }

    /// Describes every opaque part of a list.
    pub fn list_opaque_parts(instructions: &[Instruction], out: &mut Vec<String>) {
        instructions.iter().for_each(|i| i.opaque_parts(out));
    }
}

/// `goto_table:1`, `apply_actions(pop_vlan,output:2)`, `meter:5`, ...
impl fmt::Display for Instruction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let list = |f: &mut fmt::Formatter<'_>, name: &str, actions: &[Action]| {
            write!(f, "{name}(")?;
            for (i, a) in actions.iter().enumerate() {
                if i > 0 {
                    f.write_str(",")?;
                }
                write!(f, "{a}")?;
            }
            f.write_str(")")
        };
        match self {
            Instruction::GotoTable { table_id } => write!(f, "goto_table:{table_id}"),
            Instruction::WriteMetadata {
                metadata,
                metadata_mask,
            } => write!(f, "write_metadata:{metadata:#x}/{metadata_mask:#x}"),
            Instruction::WriteActions { actions } => list(f, "write_actions", actions),
            Instruction::ApplyActions { actions } => list(f, "apply_actions", actions),
            Instruction::ClearActions => f.write_str("clear_actions"),
            Instruction::Meter { meter_id } => write!(f, "meter:{meter_id}"),
            Instruction::Experimenter { experimenter, data } => {
                write!(f, "experimenter:0x{experimenter:08x}:0x{}", to_hex(data))
            }
            Instruction::Unknown {
                instruction_type,
                body,
            } => write!(f, "instruction{instruction_type}:0x{}", to_hex(body)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::DecodeError;

    fn parse(b: &[u8]) -> DecodeResult<Vec<Instruction>> {
        Instruction::parse_list(&mut Reader::new(b, 0, "test"))
    }

    fn round_trip(b: &[u8]) -> Vec<Instruction> {
        let i = parse(b).unwrap();
        let mut out = Vec::new();
        Instruction::emit_list(&i, &mut out).unwrap();
        assert_eq!(out, b);
        i
    }

    #[test]
    fn every_instruction_round_trips() {
        let b = [
            0, 1, 0, 8, 100, 0, 0, 0, // goto 100
            0, 2, 0, 24, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0xff, 0, 4, 0,
            16, 0, 0, 0, 0, 0, 0x12, 0, 8, 0, 0, 0, 0, // apply [pop_vlan]
            0, 3, 0, 8, 0, 0, 0, 0, // write []
            0, 5, 0, 8, 0, 0, 0, 0, // clear
            0, 6, 0, 8, 0, 0, 0, 7, // meter 7
            0xff, 0xff, 0, 16, 0, 0, 0, 101, 1, 2, 3, 4, 5, 6, 7, 8, // experimenter
            0, 99, 0, 8, 9, 9, 9, 9, // unknown
        ];
        let i = round_trip(&b);
        assert_eq!(i[0], Instruction::GotoTable { table_id: 100 });
        assert_eq!(
            i[1],
            Instruction::WriteMetadata {
                metadata: 1,
                metadata_mask: 0xff
            }
        );
        assert_eq!(
            i[2],
            Instruction::ApplyActions {
                actions: vec![Action::PopVlan]
            }
        );
        assert_eq!(i[4], Instruction::ClearActions);
        assert_eq!(i[5], Instruction::Meter { meter_id: 7 });
        let mut o = Vec::new();
        Instruction::list_opaque_parts(&i, &mut o);
        assert_eq!(o.len(), 2);
        let text: Vec<String> = i.iter().map(|x| x.to_string()).collect();
        assert_eq!(
            text[..6],
            [
                "goto_table:100",
                "write_metadata:0x1/0xff",
                "apply_actions(pop_vlan)",
                "write_actions()",
                "clear_actions",
                "meter:7"
            ]
        );
    }

    #[test]
    fn lengths_are_checked() {
        // Not a multiple of 8.
        assert!(matches!(
            parse(&[0, 1, 0, 12, 0, 0, 0, 0, 0, 0, 0, 0]),
            Err(DecodeError::Misaligned { .. })
        ));
        // Overruns its container.
        assert!(matches!(
            parse(&[0, 1, 0, 16, 0, 0, 0, 0]),
            Err(DecodeError::LengthOverrun { .. })
        ));
        // Fixed-size instruction of the wrong size.
        assert!(matches!(
            parse(&[0, 1, 0, 16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]),
            Err(DecodeError::LengthMismatch {
                layer: "ofp_instruction_goto_table",
                ..
            })
        ));
        // An action overrunning its instruction.
        assert!(matches!(
            parse(&[0, 4, 0, 16, 0, 0, 0, 0, 0, 0x12, 0, 16, 0, 0, 0, 0]),
            Err(DecodeError::LengthOverrun {
                layer: "ofp_action",
                offset: 8,
                ..
            })
        ));
    }
}
