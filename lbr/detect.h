/* SPDX-License-Identifier: MIT */
/* LBR detection (lbr/detect.c): fills what lbr_support() returns. */
#ifndef LBR_DETECT_H
#define LBR_DETECT_H

/* On the boot CPU; the others are taken to be the same part (hybrid LBR is not handled). */
void lbr_detect(void);

#endif
