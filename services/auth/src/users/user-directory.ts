/** A user as the provisioning needs it. */
export interface DirectoryUser {
  id: string;
  username: string;
}

export interface NewUser {
  username: string;
  phoneNumber: string;
  locale: string;
  /** The group (by name, top level) the user is created in. */
  group: string;
}

/** Users in the identity provider (the port; the adapter is Keycloak's admin REST API, keycloak-admin.ts). */
export interface UserDirectory {
  /** The user whose username is exactly `phoneNumber`, else the one whose `phoneNumber` attribute is exactly it. */
  findByPhone(phoneNumber: string): Promise<DirectoryUser | undefined>;
  /** Creates the user, in its group and without any credential, in one call; undefined when the username was taken meanwhile. */
  createUser(user: NewUser): Promise<DirectoryUser | undefined>;
}
