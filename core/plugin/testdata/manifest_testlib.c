/* manifest_testlib.c: a shared object carrying a .portico_manifest section, read (never loaded)
 * by elf_manifest_test.cc. */
__attribute__((section(".portico_manifest"), used)) static const char kManifest[] =
    "{\"name\":\"testlib\",\"version\":\"1.2.3\",\"manifestVersion\":1,"
    "\"abi\":{\"major\":1,\"minor\":0},\"sdkVersion\":\"0.1.0\",\"kinds\":[]}";

int portico_testlib_answer(void) { return 42; }
