"""switchyard's host tools as importable modules; scripts/ holds their thin executables.

log (the KTAP judge) <- qemu (booting) <- alone (tests run alone) <- run; defects (the
known-defects table), qmp, witness, deploy, and arguments (the options the tools share).
"""
