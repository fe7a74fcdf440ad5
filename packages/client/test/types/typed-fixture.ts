// Compile-time checks of the typed client (docs/client.md, "A client that checks names").
// Type-checked by `pnpm typecheck` (tsconfig.json includes packages/*/test) and by
// typed.test.ts, which also removes each @ts-expect-error below and requires an error on
// the line after it: every one marks a real mistake, not a comment that expects nothing.
// Nothing here is sent: queries are only built.
import { createClient, type ResourcesOf, type TypedQuery } from '@resourcery/client';

/** Exactly the same type (not merely assignable either way). */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const same = <A, B>(_proof: Equal<A, B>) => undefined;

interface Person {
  Id: number;
  Name: string;
  Age: number | null;
  Email?: string;
  Status: 'active' | 'retired';
  Skills: string[];
  Address?: { City: string; Country: string };
}

interface Order {
  Id: number;
  CustomerId: number;
  Total: number;
  PlacedAt: string;
}

// The relations as addResource declares them (docs/client.md, "Relations"), reused with typeof.
export const orderRelations = { Customer: { toOne: 'Person', via: 'CustomerId' } } as const;
type Relations = { Order: typeof orderRelations; Person: { Orders: { toMany: 'Order'; via: 'CustomerId' } } };

type Api = { Person: Person; Order: Order };
const api = createClient<Api, Relations>({ baseUrl: 'http://localhost' });

// Resources: a known name types the query, a misspelt one is an error.
const people = api.resource('Person');
same<typeof people, TypedQuery<Person, Person, { Orders: Order[] }>>(true);
// @ts-expect-error 'Persn' is no resource
api.resource('Persn');
api.resource('Person.Inserted').where('Age', '>', 30);
// @ts-expect-error 'Person.Created' is no change event
api.resource('Person.Created');

// Conditions: locators and value types.
people.where('Age', '>', 30).where('Name', '=', ['Ann', 'Bob']).where('Address.City', '=', 'Oslo').where('Skills.Length', '>=', 2);
people.where('Age', '=', null).where('Email', '=', null).where('Status', '=', ['active', 'retired']);
people.where({ Name: 'Ann', Age: [30, 31], 'Address.Country': 'NO' });
// @ts-expect-error 'Nmae' is misspelt
people.where('Nmae', '=', 'Ann');
// @ts-expect-error Age is a number
people.where('Age', '>', 'thirty');
// @ts-expect-error Name is a string
people.where('Name', '=', 7);
// @ts-expect-error Name is never null
people.where('Name', '=', null);
// @ts-expect-error 'gone' is not a Status
people.where('Status', '=', ['active', 'gone']);
// @ts-expect-error Address.Town does not exist
people.where('Address.Town', '=', 'Oslo');
// @ts-expect-error Age has no Length
people.where('Age.Length', '>', 2);
// @ts-expect-error Nmae is misspelt in an equality
people.where({ Nmae: 'Ann' });
// @ts-expect-error Age is a number in an equality list
people.where({ Age: [30, '31'] });
// A condition may read through a relation (to-many: any related entity), embedded or not.
people.where('Orders.Total', '>', 100);
api.resource('Order').where('Customer.Name', '=', 'Ann');
// @ts-expect-error Total is a number
people.where('Orders.Total', '>', 'much');
// @ts-expect-error an order has no Customr
api.resource('Order').where('Customr.Name', '=', 'Ann');

// select narrows the result; a dotted locator comes under its dotted name.
const names = people.select('Name', 'Age');
same<Awaited<ReturnType<typeof names.get>>, { Name: string; Age: number | null }[]>(true);
export const cities = people.select('Id', 'Address.City');
same<Awaited<ReturnType<typeof cities.first>>, { Id: number; 'Address.City': string | null } | undefined>(true);
// @ts-expect-error 'Adress' is misspelt
people.select('Adress');
// @ts-expect-error Email was not selected
names.orderAsc('Email');
// @ts-expect-error a narrowed row has no Email
names.get().then((rows) => rows[0]!.Email);
// Without select, every property.
same<Awaited<ReturnType<typeof people.get>>, Person[]>(true);

// embed adds the related type: to-one an entity or null, to-many an array.
export const withCustomer = api.resource('Order').embed('Customer');
same<
  Awaited<ReturnType<typeof withCustomer.get>>,
  { Id: number; CustomerId: number; Total: number; PlacedAt: string; Customer: Person | null }[]
>(true);
export const withOrders = people.embed('Orders').select('Name', 'Orders');
same<Awaited<ReturnType<typeof withOrders.get>>, { Name: string; Orders: Order[] }[]>(true);
export const customerNames = api.resource('Order').embed('Customer').select('Id', 'Customer.Name').orderAsc('Customer.Name');
same<Awaited<ReturnType<typeof customerNames.get>>, { Id: number; 'Customer.Name': string | null }[]>(true);
// @ts-expect-error a person has no relation Customer
people.embed('Customer');
// @ts-expect-error Customer.Name needs embed('Customer') first
api.resource('Order').select('Customer.Name');

// add, rename, order.
export const lengths = people.select('Name').add('Name.Length');
same<Awaited<ReturnType<typeof lengths.get>>, { Name: string; 'Name.Length': number }[]>(true);
export const renamed = people.rename({ Name: 'Title' }).select('Title', 'Id');
same<Awaited<ReturnType<typeof renamed.get>>, { Title: string; Id: number }[]>(true);
// @ts-expect-error Name no longer exists after rename
people.rename({ Name: 'Title' }).select('Name');
people.orderDesc('Age', 'Name').orderAsc('Address.Country');
// @ts-expect-error 'Agee' is misspelt
people.orderDesc('Agee');

// Writes take the entity's properties with their types.
people.post({ Name: 'Ann', Age: 30, Status: 'active', Skills: [] });
people.key(7).patch({ Age: 31 });
// @ts-expect-error Age is a number
people.key(7).patch({ Age: '31' });
// @ts-expect-error 'Nmae' is misspelt
people.post({ Nmae: 'Ann' });
// @ts-expect-error 'Skus' is misspelt
people.safepost('Skus');

// Macros are saved at run time: their names are not checked, their type is given.
api.macro<Person>('Seniors').where('Age', '>', 65).select('Name');

// Untyped use stays as it was: any name, any property.
const untyped = createClient({ baseUrl: 'http://localhost' });
untyped.resource('Anything').where('Whatever', '=', 'x').select('A', 'B');
untyped.resource<Person>('Person').rename({ Name: 'Title' }).select('Title');

// Generated from the OpenAPI document: openapi-typescript's `paths`, as it writes them.
interface Paths {
  '/': { get: { responses: { 200: { content: { 'application/json': Record<string, never> } } } } };
  '/Person': { get: { responses: { 200: { content: { 'application/json': { Status: 'success'; Data?: Person[] } } } } } };
  '/Person/{conditions}/{metaConditions}': { get: { responses: { 200: { content: { 'application/json': { Data?: Person[] } } } } } };
  '/Person/{Id}': { get: { responses: { 200: { content: { 'application/json': { Data?: Person[] } } } } } };
  '/Shop.Product': { get: { responses: { 200: { content: { 'application/json': { Data?: { Sku: string }[] } } } } } };
  '/Report.Pdf': { get: { responses: { 200: { content: { 'application/pdf': string } } } } };
}
same<ResourcesOf<Paths>, { Person: Person; 'Shop.Product': { Sku: string } }>(true);
const generated = createClient<ResourcesOf<Paths>>({ baseUrl: 'http://localhost' });
generated.resource('Shop.Product').where('Sku', '=', 'B-1');
// @ts-expect-error a binary resource is no entity resource
generated.resource('Report.Pdf');
