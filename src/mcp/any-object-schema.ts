/**
 * A Standard Schema that takes any object as it is: the 2.x SDK asks one of every request a
 * client sends and of every custom method a server serves; tooltrace checks the fields itself.
 */
export const ANY_OBJECT = {
  '~standard': {
    version: 1,
    vendor: 'tooltrace',
    validate: (value: unknown) =>
      value !== null && typeof value === 'object'
        ? { value }
        : { issues: [{ message: 'not an object' }] },
  },
} as const;
