//! eBPF instructions, as the device filter's program is built from them and as the kernel
//! reads them (`struct bpf_insn`).

/// One eBPF instruction, as the fields of the kernel's `struct bpf_insn`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Instruction {
    /// The operation: class, size or operator, and source bits.
    pub code: u8,
    /// The destination register (0–10).
    pub dst: u8,
    /// The source register (0–10).
    pub src: u8,
    /// The memory offset, or for a jump how many instructions to skip.
    pub off: i16,
    /// The immediate value.
    pub imm: i32,
}

/// Instruction classes, sizes, operators and operand kinds (`linux/bpf_common.h`).
mod op {
    pub const LDX: u8 = 0x01;
    pub const ALU: u8 = 0x04;
    pub const JMP: u8 = 0x05;
    pub const ALU64: u8 = 0x07;
    /// A 32-bit word (`BPF_W`).
    pub const WORD: u8 = 0x00;
    pub const MEM: u8 = 0x60;
    pub const AND: u8 = 0x50;
    pub const JNE: u8 = 0x50;
    pub const MOV: u8 = 0xb0;
    pub const CALL: u8 = 0x80;
    pub const EXIT: u8 = 0x90;
    /// The operand is the immediate (`BPF_K`).
    pub const IMM: u8 = 0x00;
}

impl Instruction {
    /// `dst = *(u32 *)(src + off)`.
    pub(super) fn load_u32(dst: u8, src: u8, off: i16) -> Instruction {
        Instruction { code: op::LDX | op::WORD | op::MEM, dst, src, off, imm: 0 }
    }

    /// `dst = (u32)dst & imm`.
    pub(super) fn and32(dst: u8, imm: i32) -> Instruction {
        Instruction { code: op::ALU | op::AND | op::IMM, dst, src: 0, off: 0, imm }
    }

    /// `if dst != imm: skip the next off instructions`.
    pub(super) fn jump_unless_equal(dst: u8, imm: i32, off: i16) -> Instruction {
        Instruction { code: op::JMP | op::JNE | op::IMM, dst, src: 0, off, imm }
    }

    /// `dst = imm` (64 bits).
    pub(super) fn mov64(dst: u8, imm: i32) -> Instruction {
        Instruction { code: op::ALU64 | op::MOV | op::IMM, dst, src: 0, off: 0, imm }
    }

    /// `return r0`.
    pub(super) fn exit() -> Instruction {
        Instruction { code: op::JMP | op::EXIT, dst: 0, src: 0, off: 0, imm: 0 }
    }

    /// Where a jump at index `at` goes when taken (the next instruction is `at + 1`);
    /// `None` for an instruction that is no jump (an exit, a call, any other class).
    pub fn jump_target(&self, at: usize) -> Option<usize> {
        let operator = self.code & 0xf0;
        let jump = self.code & 0x07 == op::JMP && operator != op::EXIT && operator != op::CALL;
        jump.then(|| (at as isize + 1 + self.off as isize) as usize)
    }

    /// The eight bytes the kernel reads: the code, the registers' nibbles (destination in
    /// the low one on little-endian machines, as C lays out `dst_reg:4, src_reg:4`), then
    /// the offset and the immediate in the machine's byte order.
    pub fn encode(&self) -> [u8; 8] {
        let registers = if cfg!(target_endian = "little") {
            (self.src & 0x0f) << 4 | (self.dst & 0x0f)
        } else {
            (self.dst & 0x0f) << 4 | (self.src & 0x0f)
        };
        let off = self.off.to_ne_bytes();
        let imm = self.imm.to_ne_bytes();
        [self.code, registers, off[0], off[1], imm[0], imm[1], imm[2], imm[3]]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instructions_encode_as_struct_bpf_insn() {
        // r3 = *(u32 *)(r1 + 4), and `if r4 != 0x12345 goto +2`, as clang writes them.
        assert_eq!(Instruction::load_u32(3, 1, 4).encode(), [0x61, 0x13, 4, 0, 0, 0, 0, 0]);
        assert_eq!(Instruction::jump_unless_equal(4, 0x12345, 2).encode(), [0x55, 0x04, 2, 0, 0x45, 0x23, 0x01, 0]);
        assert_eq!(Instruction::and32(2, 0xffff).encode(), [0x54, 0x02, 0, 0, 0xff, 0xff, 0, 0]);
        assert_eq!(Instruction::mov64(0, 1).encode(), [0xb7, 0, 0, 0, 1, 0, 0, 0]);
        assert_eq!(Instruction::exit().encode(), [0x95, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(Instruction::jump_unless_equal(2, 1, -3).encode()[2..4], [0xfd, 0xff]);
    }
}
