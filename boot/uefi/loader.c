/*
 * pmuos UEFI boot loader: BOOTX64.EFI, built with GNU-EFI (docs/design.md §2).
 *
 * Protocol, in order:
 *   1. Read \EFI\BOOT\KERNEL.ELF whole from the volume this image came from.
 *   2. Check it is an x86-64 ELF64 executable whose PT_LOAD segments lie
 *      inside the file, ascending, at p_paddr == p_vaddr; say what is wrong
 *      and return an error to the firmware otherwise.
 *   3. Allocate each segment's pages at exactly p_paddr, copy p_filesz bytes,
 *      zero up to p_memsz.
 *   4. Fill a struct boot_info (include/pmuos/bootinfo.h) below 4 GiB: magic,
 *      boot path, loader name, command line (LoadOptions), ACPI RSDP.
 *   5. GetMemoryMap + ExitBootServices, retried on a stale map key.
 *   6. Translate the UEFI memory map into boot_info.mmap (E820 types).
 *   7. cli, then call e_entry(boot_info) with the System V ABI; no return.
 *
 * The kernel runs on the firmware's identity map, GDT and stack until it
 * installs its own (boot/entry.S does so first thing). Everything this loader
 * allocates (kernel segments, boot_info, buffers) is EfiLoaderData and is
 * reported as reserved, so the kernel image and boot_info are never handed
 * out as free memory.
 *
 * Built with -DGNU_EFI_USE_MS_ABI: firmware calls are plain C calls through
 * ms_abi function pointers, no uefi_call_wrapper.
 */
#include <efi.h>
#include <efilib.h>
#include <elf.h>

#include <pmuos/bootinfo.h>

#define KERNEL_PATH  L"\\EFI\\BOOT\\KERNEL.ELF"
#define LOADER_NAME  "pmuos-uefi (GNU-EFI)"
/* Room for the descriptors that allocating the map buffer itself may add. */
#define MMAP_SLACK   4096
/* A stale key means an event changed the map; it settles within a few tries. */
#define EXIT_TRIES   8
/* x86-64's architectural physical address limit; bounds keep sums exact. */
#define PHYS_LIMIT   (1ULL << 52)

_Static_assert(sizeof(LOADER_NAME) <= BOOT_INFO_LOADER, "loader name too long");

/* The kernel's ELF entry (boot/entry.S kernel_entry64): RDI = boot_info. */
typedef void (*__attribute__((sysv_abi, noreturn)) kernel_entry_fn)(struct boot_info *);

/* The firmware memory map: descriptors are desc_size apart, not sizeof. */
struct efi_mmap {
	UINT8 *buf;
	UINTN cap;       /* bytes allocated */
	UINTN size;      /* bytes filled by GetMemoryMap */
	UINTN desc_size;
};

static EFI_STATUS read_kernel(EFI_HANDLE device, UINT8 **data, UINTN *size)
{
	EFI_FILE_IO_INTERFACE *fs;
	EFI_FILE_HANDLE root, file;
	EFI_FILE_INFO *info;
	EFI_STATUS st;

	st = BS->HandleProtocol(device, &gEfiSimpleFileSystemProtocolGuid, (void **)&fs);
	if (EFI_ERROR(st)) {
		Print(L"pmuos-uefi: boot device has no file system: %r\n", st);
		return st;
	}
	st = fs->OpenVolume(fs, &root);
	if (EFI_ERROR(st)) {
		Print(L"pmuos-uefi: cannot open the boot volume: %r\n", st);
		return st;
	}
	st = root->Open(root, &file, KERNEL_PATH, EFI_FILE_MODE_READ, 0);
	root->Close(root);
	if (EFI_ERROR(st)) {
		Print(L"pmuos-uefi: cannot open %s: %r\n", KERNEL_PATH, st);
		return st;
	}

	info = LibFileInfo(file);
	*data = info ? AllocatePool(info->FileSize) : NULL;
	if (!*data) {
		Print(L"pmuos-uefi: cannot size or buffer %s\n", KERNEL_PATH);
		st = EFI_OUT_OF_RESOURCES;
	} else {
		UINTN want = info->FileSize;

		*size = want;
		st = file->Read(file, size, *data);
		if (!EFI_ERROR(st) && *size != want)
			st = EFI_END_OF_FILE;
		if (EFI_ERROR(st)) {
			Print(L"pmuos-uefi: cannot read %s: %r\n", KERNEL_PATH, st);
			FreePool(*data);
		}
	}
	if (info)
		FreePool(info);
	file->Close(file);
	return st;
}

/* phdr < 0: the problem is in the ELF header itself. */
static EFI_STATUS elf_reject(int phdr, const CHAR16 *why)
{
	if (phdr < 0)
		Print(L"pmuos-uefi: %s: %s\n", KERNEL_PATH, why);
	else
		Print(L"pmuos-uefi: %s: program header %d: %s\n", KERNEL_PATH, phdr, why);
	return EFI_LOAD_ERROR;
}

static EFI_STATUS check_elf(const UINT8 *file, UINTN size)
{
	const Elf64_Ehdr *eh = (const void *)file;
	const Elf64_Phdr *ph;
	UINT64 prev_end = 0;
	int loads = 0, entry_ok = 0;

	if (size < sizeof(*eh))
		return elf_reject(-1, L"shorter than an ELF header");
	if (CompareMem(eh->e_ident, ELFMAG, SELFMAG))
		return elf_reject(-1, L"not an ELF file (bad magic)");
	if (eh->e_ident[EI_CLASS] != ELFCLASS64)
		return elf_reject(-1, L"not ELF64 (EI_CLASS)");
	if (eh->e_ident[EI_DATA] != ELFDATA2LSB)
		return elf_reject(-1, L"not little-endian (EI_DATA)");
	if (eh->e_machine != EM_X86_64)
		return elf_reject(-1, L"not an x86-64 file (e_machine)");
	if (eh->e_type != ET_EXEC)
		return elf_reject(-1, L"not an executable (e_type is not ET_EXEC)");
	if (eh->e_phentsize != sizeof(Elf64_Phdr) || eh->e_phnum == 0)
		return elf_reject(-1, L"bad program header size or count");
	if (eh->e_phoff > size || eh->e_phnum * sizeof(Elf64_Phdr) > size - eh->e_phoff ||
	    eh->e_phoff % __alignof__(Elf64_Phdr))
		return elf_reject(-1, L"program header table outside the file or misaligned");

	ph = (const void *)(file + eh->e_phoff);
	for (int i = 0; i < eh->e_phnum; i++, ph++) {
		if (ph->p_type != PT_LOAD)
			continue;
		if (ph->p_offset > size || ph->p_filesz > size - ph->p_offset)
			return elf_reject(i, L"PT_LOAD data outside the file");
		if (ph->p_filesz > ph->p_memsz)
			return elf_reject(i, L"PT_LOAD p_filesz > p_memsz");
		if (ph->p_paddr != ph->p_vaddr)
			return elf_reject(i, L"PT_LOAD not linked at its physical address");
		if (ph->p_memsz > PHYS_LIMIT || ph->p_paddr > PHYS_LIMIT - ph->p_memsz)
			return elf_reject(i, L"PT_LOAD beyond the 52-bit physical address space");
		/* Ascending and disjoint, so load_segments() allocates each page once. */
		if (ph->p_paddr < prev_end)
			return elf_reject(i, L"PT_LOAD overlaps or precedes the previous one");
		prev_end = ph->p_paddr + ph->p_memsz;
		if (eh->e_entry >= ph->p_paddr && eh->e_entry < prev_end)
			entry_ok = 1;
		loads++;
	}
	if (!loads)
		return elf_reject(-1, L"no PT_LOAD segment");
	if (!entry_ok)
		return elf_reject(-1, L"entry point outside every PT_LOAD segment");
	return EFI_SUCCESS;
}

/* The file has passed check_elf(). Consecutive segments may share a page. */
static EFI_STATUS load_segments(const UINT8 *file, UINT64 *entry)
{
	const Elf64_Ehdr *eh = (const void *)file;
	const Elf64_Phdr *ph = (const void *)(file + eh->e_phoff);
	UINT64 allocated_end = 0;

	*entry = eh->e_entry;

	for (int i = 0; i < eh->e_phnum; i++, ph++) {
		if (ph->p_type != PT_LOAD)
			continue;
		UINT64 first = ph->p_paddr & ~(UINT64)EFI_PAGE_MASK;
		UINT64 end = (ph->p_paddr + ph->p_memsz + EFI_PAGE_MASK) & ~(UINT64)EFI_PAGE_MASK;

		if (first < allocated_end)
			first = allocated_end;
		if (end > first) {
			EFI_PHYSICAL_ADDRESS addr = first;
			UINTN pages = EFI_SIZE_TO_PAGES(end - first);
			EFI_STATUS st = BS->AllocatePages(AllocateAddress, EfiLoaderData, pages, &addr);

			if (EFI_ERROR(st)) {
				Print(L"pmuos-uefi: program header %d: cannot allocate %ld pages at 0x%lx: %r\n",
				      i, pages, first, st);
				return st;
			}
			allocated_end = end;
		}
		CopyMem((void *)ph->p_paddr, file + ph->p_offset, ph->p_filesz);
		ZeroMem((void *)(ph->p_paddr + ph->p_filesz), ph->p_memsz - ph->p_filesz);
	}
	return EFI_SUCCESS;
}

/* LoadOptions is UCS-2; anything outside printable ASCII becomes '?'. */
static void copy_cmdline(char *dst, const EFI_LOADED_IMAGE *li)
{
	const CHAR16 *src = li->LoadOptions;
	UINTN n = src ? li->LoadOptionsSize / sizeof(CHAR16) : 0, i;

	for (i = 0; i < n && i < BOOT_INFO_CMDLINE - 1 && src[i]; i++)
		dst[i] = src[i] >= 0x20 && src[i] < 0x7f ? (char)src[i] : '?';
	dst[i] = '\0';
}

/* The ACPI 2.0 RSDP (XSDT) if the firmware has one, else the ACPI 1.0 one. */
static UINT64 find_rsdp(void)
{
	EFI_GUID acpi20 = ACPI_20_TABLE_GUID, acpi10 = ACPI_TABLE_GUID;
	UINT64 rsdp = 0;

	for (UINTN i = 0; i < ST->NumberOfTableEntries; i++) {
		EFI_CONFIGURATION_TABLE *t = &ST->ConfigurationTable[i];

		if (!CompareGuid(&t->VendorGuid, &acpi20))
			return (UINT64)(UINTN)t->VendorTable;
		if (!CompareGuid(&t->VendorGuid, &acpi10))
			rsdp = (UINT64)(UINTN)t->VendorTable;
	}
	return rsdp;
}

/*
 * GetMemoryMap then ExitBootServices with its key (docs/design.md §2). Any allocation
 * changes the map, so the buffer is (re)allocated only before a fresh
 * GetMemoryMap, never between the final one and ExitBootServices. A stale
 * key (EFI_INVALID_PARAMETER) just means: fetch the map again.
 * After a failed ExitBootServices only the memory services are guaranteed,
 * so the error messages below are best effort.
 */
static EFI_STATUS exit_boot_services(EFI_HANDLE image, struct efi_mmap *m)
{
	UINTN key;
	UINT32 version;
	EFI_STATUS st = EFI_INVALID_PARAMETER;

	for (int tries = 0; tries < EXIT_TRIES;) {
		m->size = m->cap;
		st = BS->GetMemoryMap(&m->size, (EFI_MEMORY_DESCRIPTOR *)m->buf, &key,
				      &m->desc_size, &version);
		if (st == EFI_BUFFER_TOO_SMALL) {
			if (m->buf)
				FreePool(m->buf);
			m->cap = m->size + MMAP_SLACK;
			m->buf = AllocatePool(m->cap);
			if (!m->buf) {
				Print(L"pmuos-uefi: no memory for the memory map\n");
				return EFI_OUT_OF_RESOURCES;
			}
			continue;
		}
		if (EFI_ERROR(st)) {
			Print(L"pmuos-uefi: GetMemoryMap failed: %r\n", st);
			return st;
		}
		st = BS->ExitBootServices(image, key);
		if (st != EFI_INVALID_PARAMETER)
			break;
		tries++;
	}
	if (EFI_ERROR(st))
		Print(L"pmuos-uefi: ExitBootServices failed: %r\n", st);
	return st;
}

static UINT32 boot_mem_type(UINT32 efi_type)
{
	switch (efi_type) {
	case EfiConventionalMemory:
	case EfiBootServicesCode:
	case EfiBootServicesData:
	case EfiLoaderCode: /* this loader's image: dead once the kernel runs */
		return BOOT_MEM_USABLE;
	case EfiACPIReclaimMemory:
		return BOOT_MEM_ACPI_RECLAIM;
	case EfiACPIMemoryNVS:
		return BOOT_MEM_ACPI_NVS;
	case EfiUnusableMemory:
		return BOOT_MEM_BAD;
	default:
		/* Including EfiLoaderData: the kernel image and boot_info. */
		return BOOT_MEM_RESERVED;
	}
}

/*
 * UEFI does not promise an address-ordered map, so emit descriptors lowest
 * base first (n is a few hundred at most), merging touching ranges of the
 * same type. Past BOOT_INFO_MMAP_MAX entries the highest ranges are dropped.
 * Runs after ExitBootServices: touches only memory allocated earlier.
 */
static void convert_mmap(struct boot_info *bi, const struct efi_mmap *m)
{
	UINTN n = m->size / m->desc_size;
	UINT64 next = 0;

	for (;;) {
		const EFI_MEMORY_DESCRIPTOR *lo = NULL;

		for (UINTN i = 0; i < n; i++) {
			const EFI_MEMORY_DESCRIPTOR *d = (const void *)(m->buf + i * m->desc_size);

			if (d->NumberOfPages && d->PhysicalStart >= next &&
			    (!lo || d->PhysicalStart < lo->PhysicalStart))
				lo = d;
		}
		if (!lo)
			return;

		UINT64 len = lo->NumberOfPages * EFI_PAGE_SIZE;
		UINT32 type = boot_mem_type(lo->Type);
		struct boot_mmap_entry *last = bi->mmap_count ? &bi->mmap[bi->mmap_count - 1] : NULL;

		next = lo->PhysicalStart + len;
		if (last && last->type == type && last->base + last->length == lo->PhysicalStart)
			last->length += len;
		else if (bi->mmap_count < BOOT_INFO_MMAP_MAX)
			bi->mmap[bi->mmap_count++] = (struct boot_mmap_entry){
				.base = lo->PhysicalStart, .length = len, .type = type,
			};
	}
}

EFI_STATUS efi_main(EFI_HANDLE image, EFI_SYSTEM_TABLE *systab)
{
	EFI_LOADED_IMAGE *li;
	EFI_PHYSICAL_ADDRESS bi_addr = 0xFFFFFFFF;
	struct boot_info *bi;
	struct efi_mmap mmap = { 0 };
	UINT8 *file;
	UINTN size;
	UINT64 entry;
	EFI_STATUS st;

	InitializeLib(image, systab);

	st = BS->HandleProtocol(image, &gEfiLoadedImageProtocolGuid, (void **)&li);
	if (EFI_ERROR(st)) {
		Print(L"pmuos-uefi: no LoadedImage protocol: %r\n", st);
		return st;
	}

	st = read_kernel(li->DeviceHandle, &file, &size);
	if (EFI_ERROR(st))
		return st;
	st = check_elf(file, size);
	if (!EFI_ERROR(st))
		st = load_segments(file, &entry);
	FreePool(file);
	if (EFI_ERROR(st))
		return st;

	/* Below 4 GiB: the kernel's own boot page tables map only that much. */
	st = BS->AllocatePages(AllocateMaxAddress, EfiLoaderData,
			       EFI_SIZE_TO_PAGES(sizeof(*bi)), &bi_addr);
	if (EFI_ERROR(st)) {
		Print(L"pmuos-uefi: cannot allocate boot_info below 4 GiB: %r\n", st);
		return st;
	}
	bi = (struct boot_info *)(UINTN)bi_addr;
	ZeroMem(bi, sizeof(*bi));
	bi->magic = BOOT_INFO_MAGIC;
	bi->boot_path = BOOT_PATH_UEFI;
	CopyMem(bi->loader, LOADER_NAME, sizeof(LOADER_NAME));
	copy_cmdline(bi->cmdline, li);
	bi->rsdp = find_rsdp();

	Print(L"pmuos-uefi: starting kernel at 0x%lx\n", entry);
	st = exit_boot_services(image, &mmap);
	if (EFI_ERROR(st))
		return st;

	/* Boot services are gone: no firmware calls from here on. */
	convert_mmap(bi, &mmap);
	__asm__ volatile("cli");
	((kernel_entry_fn)(UINTN)entry)(bi);
}
