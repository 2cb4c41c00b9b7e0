/* Known-answer generator for src/random.test.ts: the same splitmix32 seeding and xoshiro128** in
   plain uint32 C arithmetic. gcc -O1 -o /tmp/x test-support/xoshiro128ss.c && /tmp/x */
#include <stdio.h>
#include <stdint.h>
static uint32_t sm;
static uint32_t splitmix(void){ sm += 0x9e3779b9u; uint32_t z = sm; z = (z ^ (z >> 16)) * 0x85ebca6bu; z = (z ^ (z >> 13)) * 0xc2b2ae35u; return z ^ (z >> 16); }
static uint32_t s[4];
static uint32_t rotl(uint32_t x, int k){ return (x << k) | (x >> (32 - k)); }
static uint32_t next(void){ uint32_t result = rotl(s[1] * 5, 7) * 9; uint32_t t = s[1] << 9; s[2] ^= s[0]; s[3] ^= s[1]; s[1] ^= s[2]; s[0] ^= s[3]; s[2] ^= t; s[3] = rotl(s[3], 11); return result; }
int main(void){
  int64_t seeds[] = {0, 1, 42, -7, 123456789012LL};
  for (int i = 0; i < 5; i++) {
    int64_t seed = seeds[i];
    uint32_t lo = (uint32_t)(uint64_t)seed; 
    /* JS: Math.floor(seed / 2^32) >>> 0 */
    int64_t hi = seed >= 0 ? seed / 4294967296LL : -((-seed + 4294967295LL) / 4294967296LL);
    sm = lo ^ ((uint32_t)hi * 0x9e3779b9u);
    s[0]=splitmix(); s[1]=splitmix(); s[2]=splitmix(); s[3]=splitmix();
    printf("%lld:", (long long)seed);
    for (int j = 0; j < 6; j++) printf(" %u", next());
    printf("\n");
  }
}
