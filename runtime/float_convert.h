/* Private float conversions not in the public header. */
#ifndef TLRT_FLOAT_CONVERT_H
#define TLRT_FLOAT_CONVERT_H
#include <stdint.h>
uint8_t tlrt_f32_to_e4m3(float f);
#endif
